'use strict';
// The Hourglass gRPC API from Node.js: service clients made by @grpc/proto-loader from the shipped
// .proto files at run time, and the rules every call follows.
//
// The rules (from the Java client: ServerPool, StatusMapping, Subscription, RoomReconnects):
//
// * Any node serves any client, but only the leader dispatches and runs rooms. A node that cannot
//   serve a call answers UNAVAILABLE; when it knows the leader it names it in the trailer
//   `hourglass-leader` (host:port of the leader's client port). Go there at once.
// * UNAVAILABLE without a hint is an election under way, a node that is down, or one that is
//   stopping: try the next server, every 50 ms during the first 3 s of an outage (a failover
//   elects a leader within about a second), then with a doubling pause of up to 1 s.
// * Other codes are answers, not outages: INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE,
//   NOT_FOUND, ALREADY_EXISTS, PERMISSION_DENIED, UNAUTHENTICATED and UNIMPLEMENTED are never retried.

const fs = require('fs');
const path = require('path');

const { Failure, SetupError } = require('./errors');

const LEADER_TRAILER = 'hourglass-leader';
const PROTOS = ['hourglass/v1/broker.proto', 'hourglass/v1/rooms.proto'];

function requirePackage(name) {
  try {
    return require(name);
  } catch (e) {
    throw new SetupError(`cannot load ${name}: run "npm ci" in examples/node (it installs the versions `
      + 'pinned in package-lock.json)');
  }
}

const grpc = requirePackage('@grpc/grpc-js');
const protoLoader = requirePackage('@grpc/proto-loader');
const { status } = grpc;

const FINAL_CODES = new Set([status.INVALID_ARGUMENT, status.FAILED_PRECONDITION, status.OUT_OF_RANGE,
  status.NOT_FOUND, status.ALREADY_EXISTS, status.PERMISSION_DENIED, status.UNAUTHENTICATED,
  status.UNIMPLEMENTED]);

/** The .proto files of the source tree this example lives in. */
function defaultProtoDir() {
  return path.resolve(__dirname, '..', '..', '..', 'client', 'src', 'main', 'proto');
}

/** The hourglass.v1 package: service client constructors (Broker, Rooms) by name. */
function loadApi(protoDir) {
  for (const proto of PROTOS) {
    if (!fs.existsSync(path.join(protoDir, proto))) {
      throw new SetupError(`no ${proto} under ${protoDir}: pass --protos DIR (a directory holding hourglass/v1/*.proto)`);
    }
  }
  const definition = protoLoader.loadSync(PROTOS, {
    includeDirs: [protoDir],
    keepCase: true, // field names as in the .proto files: delay_ms, producer_id
    longs: Number, // int64 fields are epoch milliseconds and delays: well within 2^53
    enums: String, // SubscriptionMode 'SYNC', EjectReason 'UNSUBSCRIBED'
    defaults: true, // absent fields read as their default: ok=false, attempt=0
    oneofs: true, // a frame says which of its oneof fields is set: frame.frame === 'delivery'
  });
  return grpc.loadPackageDefinition(definition).hourglass.v1;
}

function leaderHint(error) {
  const values = error && error.metadata ? error.metadata.get(LEADER_TRAILER) : [];
  return values.length > 0 ? String(values[0]) : null;
}

function reconnectable(code) {
  return !FINAL_CODES.has(code);
}

function codeName(code) {
  return Object.keys(status).find((k) => status[k] === code) || String(code);
}

function oneLine(text, limit = 120) {
  const s = String(text || '').split(/\s+/).join(' ').trim();
  return s.length <= limit ? s : `${s.slice(0, limit - 3)}...`;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The servers the user named plus leaders that followers named, one client per service and server,
 * and the one in use. Calls stick to the current server and move off it only when it fails.
 */
class ServerPool {
  constructor(api, addresses) {
    if (addresses.length === 0) {
      throw new SetupError('--servers names no server');
    }
    this.api = api;
    this.addresses = [...addresses];
    this.index = 0;
    this.clients = new Map(); // "Service address" -> client
  }

  get current() {
    return this.addresses[this.index];
  }

  client(service, address) {
    const key = `${service} ${address}`;
    if (!this.clients.has(key)) {
      this.clients.set(key, new this.api[service](address, grpc.credentials.createInsecure()));
    }
    return this.clients.get(key);
  }

  /**
   * Leaves server `failed`: for the leader it named if it named another one (returns true), else
   * for the next server in the list (returns false).
   */
  moveOff(failed, hint) {
    if (hint && hint !== failed) {
      if (!this.addresses.includes(hint)) {
        this.addresses.push(hint);
      }
      this.index = this.addresses.indexOf(hint);
      return true;
    }
    if (this.current === failed) {
      this.index = (this.index + 1) % this.addresses.length;
    }
    return false;
  }

  close() {
    for (const c of this.clients.values()) {
      c.close();
    }
  }
}

/**
 * The pause before the next attempt of an outage: 50 ms for its first 3 s, then doubling to 1 s.
 * A redirect to a named leader is followed at once, unless the last attempt was one too.
 */
class Backoff {
  constructor() {
    this.reset();
  }

  reset() {
    this.since = null;
    this.pauseMs = 50;
    this.followed = false;
  }

  async wait(followed) {
    const now = Date.now();
    if (this.since === null) {
      this.since = now;
    }
    if (followed && !this.followed) {
      this.followed = true;
      return;
    }
    this.followed = followed;
    if (now - this.since > 3000) {
      this.pauseMs = Math.min(this.pauseMs * 2, 1000);
    }
    await sleep(this.pauseMs);
  }
}

function unary(client, method, request, timeoutMs) {
  return new Promise((resolve, reject) => {
    client[method](request, { deadline: Date.now() + timeoutMs }, (error, response) => (error ? reject(error) : resolve(response)));
  });
}

/**
 * Calls a unary RPC, retrying as the header says. A request retried after UNAVAILABLE or
 * DEADLINE_EXCEEDED may have been applied the first time: only retry requests that carry producer
 * ids (the broker answers a repeated id with the first message's id and stores nothing); this
 * example's do.
 */
async function callUnary(pool, service, method, request, what, out, giveUpAfterMs = 30000, attemptMs = 5000) {
  const giveUpAt = Date.now() + giveUpAfterMs;
  const backoff = new Backoff();
  let failures = 0;
  for (;;) {
    const address = pool.current;
    try {
      const answer = await unary(pool.client(service, address), method, request, attemptMs);
      if (failures > 0) {
        out(`${what}: answered by ${address} after ${failures} failed attempt(s)`);
      }
      return answer;
    } catch (e) {
      if (e.code !== status.UNAVAILABLE && e.code !== status.DEADLINE_EXCEEDED) {
        throw new Failure(`${what}: ${address} answered ${codeName(e.code)}: ${e.details}`);
      }
      if (Date.now() > giveUpAt) {
        throw new Failure(`${what}: no server answered within ${giveUpAfterMs / 1000} s `
          + `(last: ${address} ${codeName(e.code)}: ${e.details})`);
      }
      const followed = pool.moveOff(address, leaderHint(e));
      if (followed || failures === 0) { // the first failure of an outage, and every redirect
        out(`${what}: ${address} answered ${codeName(e.code)} (${oneLine(e.details)}); `
          + `${followed ? 'following hourglass-leader to ' : 'retrying, next '}${pool.current}`);
      }
      failures += 1;
      await backoff.wait(followed);
    }
  }
}

module.exports = {
  Backoff, Failure, ServerPool, SetupError, callUnary, codeName, defaultProtoDir, grpc, leaderHint,
  loadApi, oneLine, reconnectable, sleep,
};
