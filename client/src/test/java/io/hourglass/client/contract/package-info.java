/**
 * The gRPC API as a contract, checked by the build: its reference pages, its conventions and its
 * compatibility with the last release, all read from the descriptors protoc writes for
 * {@code client/src/main/proto} (comments included).
 *
 * <pre>
 *  src/main/proto ──protoc──▶ target/api-descriptors/hourglass-v1.pb
 *                                  │
 *          ┌───────────────────────┼──────────────────────────┐
 *          ▼                       ▼                          ▼
 *    ApiReference            ProtoConventions           BreakingChanges ◀── api-baseline/hourglass-v1.pb
 *   (docs/api/*.md)       (versioned package,            (nothing removed,     (the last release's)
 *          │              a comment on everything)        renumbered, retyped)
 *   ApiReferenceTest      ProtoConventionsTest         ApiCompatibilityTest
 * </pre>
 *
 * Nothing here writes into the source tree: a check that fails says what to copy where.
 */
package io.hourglass.client.contract;
