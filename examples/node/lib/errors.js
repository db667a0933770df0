'use strict';
// The example's two kinds of error; no dependencies, so that a missing package can be reported.

/** Something the example needs is missing on this machine (a package, the .proto files): exit 2. */
class SetupError extends Error {}

/** A step did not do what it must; the message is the example's one-line error: exit 1. */
class Failure extends Error {}

module.exports = { Failure, SetupError };
