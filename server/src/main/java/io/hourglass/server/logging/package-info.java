/** Logging helpers of the server: what its logback configuration refers to. */
package io.hourglass.server.logging;
