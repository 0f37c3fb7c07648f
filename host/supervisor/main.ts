/**
 * The supervisor's entry, `node dist/host/supervisor/main.js --socket S --root R --namespace N`:
 * the compile cache first (core/compile-cache.ts), then the process (supervisor-process.ts).
 */
import { useCompileCache } from "../../core/compile-cache.js";

useCompileCache();
await import("./supervisor-process.js");
