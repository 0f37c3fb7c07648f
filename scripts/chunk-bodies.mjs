// What both bundling scripts (bundle-client.mjs, bundle-engined.mjs) do with esbuild's ES module
// outputs for core/chunk-loader.cts: each made the body of a CommonJS module, and the launcher
// of a process entry written.
import { transform } from "esbuild";
import { readFileSync, writeFileSync } from "node:fs";

const LOADER = new URL("../dist/core/chunk-loader.cjs", import.meta.url);

/**
 * Rewrites each file as a CommonJS module body: static imports become require() calls, dynamic
 * ones require() in a promise (built-ins and npm packages too: their ES module facades are what
 * cost), import.meta.url the chunk's own URL, which the loader passes as `__importMetaUrl`.
 */
export async function asChunkBodies(files) {
  for (const file of files) {
    const { code } = await transform(readFileSync(file, "utf8"), {
      format: "cjs",
      platform: "node",
      target: "node24",
      supported: { "dynamic-import": false },
      define: { "import.meta.url": "__importMetaUrl" },
      logLevel: "warning",
    });
    writeFileSync(file, code);
  }
}

/** A launcher: the loader (as tsc built it), then the run of `entry`, a chunk beside it. */
export function launcher(entry, opts = {}) {
  const loader = readFileSync(LOADER, "utf8").replace(/\n\/\/# sourceMappingURL=.*\n?$/, "\n");
  if (!/^function run\(/m.test(loader)) throw new Error(`${LOADER.pathname}: no run() to call`);
  return `${loader}run(${JSON.stringify(entry)}, ${JSON.stringify(opts)});\n`;
}
