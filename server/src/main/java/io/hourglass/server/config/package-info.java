/** Loading and typing of node configuration: file, HOURGLASS_* environment, flags. */
package io.hourglass.server.config;
