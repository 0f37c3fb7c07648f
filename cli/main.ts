/**
 * What `bin/engine` runs: the compile cache first (core/compile-cache.ts), then the client.
 * Nothing else belongs here: every module imported statically would be compiled without it.
 */
import { useCompileCache } from "../core/compile-cache.js";

useCompileCache();
await import("./engine.js");
