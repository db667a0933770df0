/** Typed configuration records, one per component, each with its keys and defaults. */
package io.hourglass.core.config;
