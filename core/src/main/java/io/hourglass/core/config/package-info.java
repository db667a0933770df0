/**
 * Typed configuration: one record per component, each declaring its keys as {@link io.hourglass.core.config.ConfigKey}
 * constants (name, type, default, bounds, one-line description) and reading {@link io.hourglass.core.config.Settings}
 * only through them. The server's key registry collects the records' {@link io.hourglass.core.config.ConfigSection}s;
 * the configuration reference is rendered from it, so docs, defaults and bounds cannot drift apart.
 */
package io.hourglass.core.config;
