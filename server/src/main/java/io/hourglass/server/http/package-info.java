/** The HTTP endpoint for /metrics, /healthz and /readyz. */
package io.hourglass.server.http;
