/**
 * V8's code cache for our modules (Node's module compile cache), kept in `dist/.compile-cache`
 * beside the code it was compiled from. The daemon's and the supervisor's entries, run from
 * their modules (`node dist/host/engined.js`), turn it on before they import anything else,
 * since an ES module graph is compiled whole before any of it runs: with the cache a start
 * reads compiled code instead of parsing its modules again. The bundles (what bin/engined and
 * bin/engine run) keep caches of their own, made after the code ran (core/chunk-loader.cts),
 * in `dist/.code-cache`, by the same rule below; npm packages they require use this one.
 *
 * Why there and not in Node's default (`$TMPDIR/node-compile-cache`): a cache anyone can write
 * to is code anyone can give a root process. Beside the code it has the code's owner; a user
 * who cannot write there (the client run by someone other than the installer) runs without it,
 * which Node allows silently. `NODE_DISABLE_COMPILE_CACHE=1` turns it off.
 */
import { enableCompileCache } from "node:module";
import { fileURLToPath } from "node:url";

const COMPILE_CACHE_DIR = fileURLToPath(new URL("../.compile-cache", import.meta.url));

export function useCompileCache(): void {
  enableCompileCache(COMPILE_CACHE_DIR);
}
