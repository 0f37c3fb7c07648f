/**
 * What `bin/engined` runs: the compile cache first (core/compile-cache.ts), then the daemon's
 * process (daemon-process.ts). Nothing else belongs here: every module imported statically
 * would be compiled without the cache.
 */
import { useCompileCache } from "../core/compile-cache.js";

useCompileCache();
await import("./daemon-process.js");
