/**
 * undici, loaded on first use. Its index loads all of it (fetch, WebSocket, caches, mocks: 109
 * modules), the largest single cost of a daemon's start, for what only talks to the supervisor
 * (started with the first container) and to registries (the first pull). It is a CommonJS
 * package, so require() gives it synchronously where it is first needed; types come from
 * `import type`, which loads nothing.
 */
import { createRequire } from "node:module";

let loaded: typeof import("undici") | undefined;

export function undici(): typeof import("undici") {
  return (loaded ??= createRequire(import.meta.url)("undici") as typeof import("undici"));
}
