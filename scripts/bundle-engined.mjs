// After the build: bundles the daemon (engined, its supervisor and the built-in plugins) from
// the compiled modules under dist/ into dist/engined-bundle/, which bin/engined runs. A start
// that loads some 600 modules spends most of its time in Node's module loader (resolving,
// stat-ing, reading package.json files, compiling each one); the bundle is a few files
// (bench/README.md, startup.mjs, has the figures).
//
// - The input is what tsc wrote (typia's checks already generated), not the TypeScript.
// - One build with code splitting: the daemon, the supervisor, the spool guard's worker and
//   every built-in plugin are entries sharing their chunks, so a plugin loaded at run time uses
//   the daemon's own core (host/bundle-entries.ts: which file runs for a module loaded by path).
//   What the code imports lazily (`await import(...)`) stays a chunk of its own, loaded when it
//   is used. The plugins' manifests are not entries: they import nothing at run time (only
//   types), and each entry more splits the shared code into more chunks, each a file a start
//   loads; `engined --help` imports them from dist/plugins as they are.
// - Every output is in one folder, and each compiled module's `import.meta.url` is rewritten to
//   its own place under dist/ (relative to that folder), so the paths a module finds beside
//   itself (package.json, build-info.json, the compile cache, proto files) stay the same.
// - npm packages are bundled, but for those with native code or files found at run time.
// - The chunks are then made CommonJS module bodies (scripts/chunk-bodies.mjs), which the
//   launchers (`<entry>.run.cjs`: bin/engined runs host.engined.run.cjs) load through
//   core/chunk-loader.cts, with V8 code caches made once the process is ready: no ES module
//   loader, no ES module facades of Node's built-ins, functions compiled from the cache.
// - Outputs are written to a folder of their own, then each renamed into place: a daemon or
//   supervisor holds its own build's files open from its start (core/chunk-loader.cts), and a
//   rename leaves what it holds as it was, where writing over a file would change it under the
//   process. The previous build's outputs are also kept beside the new ones, for processes
//   started before their files were held.
import { build } from "esbuild";
import { asChunkBodies, launcher } from "./chunk-bodies.mjs";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, relative, sep } from "node:path";

const ROOT = new URL("..", import.meta.url).pathname;
const DIST = join(ROOT, "dist");
const OUT = join(DIST, "engined-bundle");
const LIST = join(OUT, "outputs.json");
/** Where a build writes its outputs before they are renamed into OUT (the same depth under dist/). */
const STAGE = join(DIST, ".engined-bundle-next");
const CACHE = join(DIST, ".code-cache/engined-bundle");

// (the name rule of host/bundle-entries.ts: the path under dist/, folders joined by dots)
const entryName = (underDist) => underDist.replace(/\.js$/, "").split(sep).join(".");

/** The entries that are processes or threads, each with a launcher (core/chunk-loader.cts). */
const PROCESSES = ["host/engined.js", "host/supervisor/main.js", "host/supervisor/spool-guard-worker.js"];
const WORKERS = new Set(["host/supervisor/spool-guard-worker.js"]);
// engined.js and main.js turn Node's compile cache on, then import the process's module with a
// top-level await; in the bundle the loader keeps the caches, and the entry is that module
const ENTRY_MODULE = { "host/engined.js": "host/daemon-process.js", "host/supervisor/main.js": "host/supervisor/supervisor-process.js" };
const modules = [...PROCESSES];
for (const folder of readdirSync(join(DIST, "plugins")).sort()) {
  if (existsSync(join(DIST, "plugins", folder, "index.js"))) modules.push(join("plugins", folder, "index.js"));
}
const entryPoints = Object.fromEntries(modules.map((m) => [entryName(m), join(DIST, ENTRY_MODULE[m] ?? m)]));

/** Each compiled module's import.meta.url, as the module's own place under dist/. */
const ownPlace = {
  name: "own-place",
  setup(b) {
    b.onLoad({ filter: /\.js$/ }, (args) => {
      if (!args.path.startsWith(DIST + sep) || args.path.startsWith(OUT + sep)) return undefined;
      const text = readFileSync(args.path, "utf8");
      if (!text.includes("import.meta.url")) return { contents: text, loader: "js" };
      const place = `new URL(${JSON.stringify(relative(OUT, args.path))}, import.meta.url).href`;
      return { contents: text.replaceAll("import.meta.url", place), loader: "js" };
    });
  },
};

const previous = existsSync(LIST) ? JSON.parse(readFileSync(LIST, "utf8")) : [];
mkdirSync(OUT, { recursive: true });
rmSync(STAGE, { recursive: true, force: true });
const result = await build({
  entryPoints,
  absWorkingDir: ROOT,
  outdir: STAGE,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node24",
  chunkNames: "chunk-[hash]",
  metafile: true,
  logLevel: "warning",
  // native code (loaded from their package folders), gRPC and protobuf.js (which find their
  // files at run time; only the CRI loads them), undici (required by name, host/http/undici.ts),
  // yaml (imported with `await import()`: a CommonJS package so imported from a chunk would
  // show its exports only as `default`; Node's own loader gives them by name),
  // and what Fastify requires only when a route has a schema (none has: host/api/app.ts) or for
  // inject(): ajv, fast-json-stringify and light-my-request, 700 kB a start would read for nothing
  external: [
    "koffi", "node-unix-socket", "@napi-rs/xattr", "@grpc/*", "protobufjs", "undici", "yaml",
    "@fastify/ajv-compiler", "@fastify/fast-json-stringify-compiler", "light-my-request",
  ],
  define: { ENGINE_BUNDLED: "true" },
  outExtension: { ".js": ".cjs" },
  plugins: [ownPlace],
});
await asChunkBodies(Object.keys(result.metafile.outputs).map((f) => join(ROOT, f)));
const launchers = PROCESSES.map((m) => {
  const file = `${entryName(m)}.run.cjs`;
  writeFileSync(join(STAGE, file), launcher(`${entryName(m)}.cjs`, WORKERS.has(m) ? { worker: true } : { ready: true }));
  return file;
});

const outputs = [...Object.keys(result.metafile.outputs).map((f) => relative(STAGE, join(ROOT, f))), ...launchers];
for (const file of outputs) renameSync(join(STAGE, file), join(OUT, file));
rmSync(STAGE, { recursive: true, force: true });
const keep = new Set([...outputs, ...previous, "outputs.json"]);
for (const file of readdirSync(OUT)) if (!keep.has(file)) rmSync(join(OUT, file), { force: true });
// and the code caches of chunks no longer there (core/chunk-loader.cts)
if (existsSync(CACHE)) for (const file of readdirSync(CACHE)) if (!keep.has(file.replace(/\.v8(\..*)?$/, ""))) rmSync(join(CACHE, file), { force: true });
writeFileSync(`${LIST}.next`, JSON.stringify(outputs));
renameSync(`${LIST}.next`, LIST);
