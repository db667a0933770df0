/**
 * A Hourglass node: composition root ({@link io.hourglass.server.HourglassNode}), process entry
 * point ({@link io.hourglass.server.Main}), metrics.
 */
package io.hourglass.server;
