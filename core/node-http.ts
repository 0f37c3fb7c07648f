/**
 * `node:http`, taken with require() rather than `import`. An ES import of a built-in module
 * makes a namespace of all of its exports, and reading them runs node:http's lazy getters
 * (WebSocket, MessageEvent...: the whole undici that Node bundles), which the daemon never
 * uses: some 20 ms of every start here, more on a loaded machine. require() hands back the
 * module, whose getters run only when read. Types still come from `import type`.
 */
import { createRequire } from "node:module";

export const http = createRequire(import.meta.url)("node:http") as typeof import("node:http");
