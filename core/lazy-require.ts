/**
 * A CommonJS package loaded where it is first used rather than when the process starts: require()
 * gives it synchronously at that point, and its types come from `import type`, which loads
 * nothing. For packages a start does not need and that cost it: undici's index (109 modules),
 * and the native add-ons (koffi, node-unix-socket, @napi-rs/xattr), each a dlopen() and, for
 * napi-rs, a look at the C library (process.report) at load: together some 40 ms of every start
 * for what the first container, attach or layer needs.
 */
import { createRequire } from "node:module";

const load = createRequire(import.meta.url);

/** A function that gives the package `name`, loading it the first time. */
export function lazyRequire<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= load(name) as T);
}
