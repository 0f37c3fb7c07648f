/**
 * The loader of our bundles (the client's, dist/client/, and the daemon's, dist/engined-bundle/):
 * each chunk the bundling scripts write is the body of a CommonJS module, and this loader
 * compiles it with a V8 code cache made after the code ran. The bundling scripts write one
 * launcher per process entry (`dist/client/main.cjs`, `dist/engined-bundle/<entry>.run.cjs`):
 * this file with a call of `run` at its end.
 *
 * Why not Node's own module compile cache (core/compile-cache.ts), which these processes used
 * before: Node makes its cache when it compiles a file, before the file runs, and V8 compiles a
 * function only when it is first called, so that cache holds little more than each file's top
 * level; every start compiled again the functions it calls (`engine ps`: some 15% of its whole
 * time). A cache made with `createCachedData()` once the code has run holds all of them. And no
 * ES module loader: a chunk is read, compiled from its cache and run, without resolution, links
 * or built-ins' ES module facades (which read every export, lazy ones too).
 *
 * The caches, `dist/.code-cache/<bundle folder>/<chunk>.v8`, hold the keys of the runs they cover
 * (the layout: readCache). A key is the set of chunks a run had loaded when it wrote (each
 * command of the client is a chunk of its own, so the key tells commands apart, and what loads
 * more code). A run whose key a chunk's cache lacks, or whose cache V8 refused (another Node,
 * other V8 flags) or was damaged, writes that chunk's cache again, from everything compiled so
 * far, so each cache grows to what the runs used: at exit, or when the code says it is ready
 * (`writeCaches`, which the daemon and the supervisor call once they serve; see `run`).
 * Written to a temporary name and renamed: a reader sees a whole cache or none.
 *
 * Where, and who may write it: beside the code, as core/compile-cache.ts explains (a cache is
 * code the process runs; it is kept where only the code's owner can write). A process that
 * cannot write there runs without one. `NODE_DISABLE_COMPILE_CACHE=1` turns the caches off.
 *
 * What a chunk sees besides `exports`, `require` and `module`: `__importMetaUrl` (its own URL,
 * for `import.meta.url`) and `__engineLoader` (the `ChunkLoader` below: host/bundle-entries.ts
 * loads built-in plugins through it, so that they share the daemon's chunks).
 */
const fs = process.getBuiltinModule("node:fs");
const vm = process.getBuiltinModule("node:vm");
const { createRequire, enableCompileCache } = process.getBuiltinModule("node:module");

const BUNDLE_DIR = __dirname;
const CACHE_DIR = `${__dirname}/../.code-cache/${__dirname.slice(__dirname.lastIndexOf("/") + 1)}`;
/** import.meta.url of the chunks, which sit beside this file (as pathToFileURL makes it, without its cost). */
const BASE_URL = `file://${encodeURI(__dirname).replace(/[?#]/g, encodeURIComponent)}/`;
const COMPILE_CACHE_DIR = `${__dirname}/../.compile-cache`;
const caching = !process.env.NODE_DISABLE_COMPILE_CACHE;
/** npm packages and built-ins: Node's require from here, its compile cache on at the first package. */
const requirePackage = createRequire(__filename);
let packagesCached = false;

interface Chunk {
  name: string;
  script: InstanceType<typeof vm.Script>;
  /** The chunk file's size and modification time, as its cache records them. */
  source: string;
  /** The run keys its cache covers; undefined when there was none or V8 refused it. */
  keys: number[] | undefined;
}
const chunks: Chunk[] = [];
const loaded = new Map<string, { exports: object }>();

/** What chunks are given as `__engineLoader`. */
export interface ChunkLoader {
  /** The exports of a chunk of this bundle, by its file name. */
  load(name: string): object;
  /** Node's own import() (a chunk's import() calls are require() in a promise). */
  importNative(url: string): Promise<unknown>;
  /** Writes the caches this run adds to. */
  writeCaches(): void;
}
const loader: ChunkLoader = { load, importNative: (url) => import(url), writeCaches: () => writeCaches() };

/**
 * A cache file: the byte length of a JSON header, the header (`{ source, keys }`), then V8's
 * data twice.
 * - `source`, the chunk file's size and modification time (ns) when the cache was made: V8
 *   checks only that a cache was made from a source of the same length, and would run a
 *   stale cache's code for another source of that length (a chunk of a later build keeps its
 *   name when it is an entry).
 * - Twice, because V8 does not check its code cache's checksum in release builds and a flipped
 *   bit in it can crash the process ("Fatal error ... unreachable code",
 *   test/client-loader.test.ts), at every start; comparing two copies is a native memcmp, where
 *   a checksum computed in JavaScript at start costs 2 ms and loading node:zlib for its CRC-32
 *   nearly 3.
 */
function readCache(name: string, source: string): { keys: number[]; data: Buffer } | undefined {
  if (!caching) return undefined;
  let file: Buffer;
  try {
    file = fs.readFileSync(`${CACHE_DIR}/${name}.v8`);
  } catch {
    return undefined;
  }
  try {
    const start = 4 + file.readUInt32LE(0);
    const size = (file.length - start) / 2;
    if (!Number.isInteger(size) || size <= 0) return undefined;
    const data = file.subarray(start, start + size);
    if (!data.equals(file.subarray(start + size))) return undefined;
    const header = JSON.parse(file.toString("utf8", 4, start)) as { source: string; keys: number[] };
    return header.source === source ? { keys: header.keys, data } : undefined;
  } catch {
    return undefined; // cut short or damaged: compiled afresh, and written again
  }
}

/**
 * Built-ins that chunks require at their top level (the bundler hoists every require of a
 * chunk's modules there) for work that a start does not do, loaded at first use instead:
 * node:http2, which Fastify requires for the servers it makes with `http2: true` (the daemon's
 * never are); TLS and HTTPS (a TLS listener, a registry), node:crypto (digests, random names),
 * zlib (layers), DNS (registries, the embedded name server), node:cluster (which a bundled
 * package requires and never uses) and worker threads (the supervisor's spool guard). Together
 * 3 to 8 ms of CPU of a daemon start (bench/README.md, "Built-ins at first use"), and
 * node:child_process, 2 ms of a start that runs no program (core/exec-file.ts). Only modules
 * that are objects: a stand-in cannot be called (node:assert is a function, and Fastify's
 * router calls it at every start anyway).
 */
const AT_FIRST_USE = new Set([
  "node:http2",
  "node:tls",
  "node:https",
  "node:crypto",
  "node:zlib",
  "node:dns",
  "node:dns/promises",
  "node:cluster",
  "node:worker_threads",
  "node:child_process",
]);

const deferred = new Map<string, object>();

/** A stand-in for the built-in, which it loads at its first use and forwards everything to. */
function atFirstUse(specifier: string): object {
  let real: object | undefined;
  const module = () => (real ??= requirePackage(specifier) as object);
  const standIn = new Proxy(
    {},
    {
      get: (_, key) => Reflect.get(module(), key),
      set: (_, key, value) => Reflect.set(module(), key, value),
      has: (_, key) => Reflect.has(module(), key),
      ownKeys: () => Reflect.ownKeys(module()),
      // (reported configurable, as a proxy must for what its empty target lacks)
      getOwnPropertyDescriptor: (_, key) => {
        const d = Reflect.getOwnPropertyDescriptor(module(), key);
        return d && { ...d, configurable: true };
      },
      defineProperty: (_, key, d) => Reflect.defineProperty(module(), key, d),
      deleteProperty: (_, key) => Reflect.deleteProperty(module(), key),
      getPrototypeOf: () => Reflect.getPrototypeOf(module()),
    },
  );
  deferred.set(specifier, standIn);
  return standIn;
}

function requireFrom(specifier: string): unknown {
  if (specifier.startsWith("./")) return load(specifier.slice(2));
  if (AT_FIRST_USE.has(specifier)) return deferred.get(specifier) ?? atFirstUse(specifier);
  if (!packagesCached && caching && !specifier.startsWith("node:")) {
    packagesCached = true;
    enableCompileCache(COMPILE_CACHE_DIR);
  }
  return requirePackage(specifier);
}

/**
 * The files of its own build that a long-lived process (the daemon, the supervisor) holds open
 * from its start, by name, until it loads them. Such a process outlives rebuilds and upgrades
 * (the supervisor outlives the daemon by design), and loads chunks long after its start (a pull's
 * code, a log driver's): the build puts each new output in place with a rename
 * (scripts/bundle-engined.mjs), so the file a process opened stays its own build's, whatever
 * the folder holds since. Without them a daemon two builds old answered a pull with a 500
 * (ENOENT of a chunk the build had removed).
 */
const held = new Map<string, number>();

/** Opens the files the bundle's `outputs.json` names that are not loaded yet (launchers aside). */
function holdBundle(): void {
  let names: unknown;
  try {
    names = JSON.parse(fs.readFileSync(`${BUNDLE_DIR}/outputs.json`, "utf8"));
  } catch {
    return; // no list (the client's bundle has none): loaded from the folder as it is
  }
  if (!Array.isArray(names)) return;
  for (const name of names) {
    if (typeof name !== "string" || !name.endsWith(".cjs") || name.endsWith(".run.cjs") || loaded.has(name) || held.has(name)) continue;
    try {
      held.set(name, fs.openSync(`${BUNDLE_DIR}/${name}`, "r"));
    } catch {
      // gone already (a build ran meanwhile): loaded from the folder, if it is there
    }
  }
}

function load(name: string): object {
  const done = loaded.get(name);
  if (done) return done.exports;
  const file = `${BUNDLE_DIR}/${name}`;
  const fd = held.get(name) ?? fs.openSync(file, "r");
  held.delete(name);
  let code: string;
  let source: string;
  try {
    const stat = fs.fstatSync(fd, { bigint: true });
    source = `${stat.size}:${stat.mtimeNs}`;
    code = fs.readFileSync(fd, "utf8");
  } finally {
    fs.closeSync(fd);
  }
  const cache = readCache(name, source);
  // the wrapper is on the first line, as Node's own, so that stack traces keep the chunk's lines
  const script = new vm.Script(`(function (exports, require, module, __importMetaUrl, __engineLoader) {${code}\n})`, {
    filename: file,
    cachedData: cache?.data,
  });
  chunks.push({ name, script, source, keys: cache && !script.cachedDataRejected ? cache.keys : undefined });
  const module = { exports: {} };
  loaded.set(name, module);
  script.runInThisContext()(module.exports, requireFrom, module, BASE_URL + name, loader);
  return module.exports;
}

/** FNV-1a of the names of the chunks this run loaded, in their order of loading. */
function runKey(): number {
  let hash = 0x811c9dc5;
  for (const { name } of chunks) {
    for (let i = 0; i < name.length; i++) hash = Math.imul(hash ^ name.charCodeAt(i), 0x01000193) >>> 0;
    hash = Math.imul(hash ^ 0x2c, 0x01000193) >>> 0;
  }
  return hash;
}

/** Writes the caches this run adds to; `onlyMissing`: those of chunks without one only. */
function writeCaches(onlyMissing = false): void {
  if (!caching) return;
  const key = runKey();
  for (const chunk of chunks) {
    if (chunk.keys?.includes(key) || (onlyMissing && chunk.keys)) continue;
    // (a worker thread shares the process's pid)
    const temporary = `${CACHE_DIR}/${chunk.name}.v8.${process.pid}.${Math.random().toString(36).slice(2)}`;
    try {
      const header = Buffer.from(JSON.stringify({ source: chunk.source, keys: [...(chunk.keys ?? []), key] }));
      const length = Buffer.alloc(4);
      length.writeUInt32LE(header.length);
      fs.mkdirSync(CACHE_DIR, { recursive: true, mode: 0o755 });
      const data = chunk.script.createCachedData();
      fs.writeFileSync(temporary, Buffer.concat([length, header, data, data]), { mode: 0o644 });
      fs.renameSync(temporary, `${CACHE_DIR}/${chunk.name}.v8`);
      chunk.keys = [...(chunk.keys ?? []), key];
    } catch {
      // not ours to write (another user's install), or a full disk: the process runs without
      try {
        fs.unlinkSync(temporary);
      } catch {
        // never made
      }
      return;
    }
  }
}

/**
 * Runs a bundle entry (the launcher's last line).
 * - `worker`: a worker thread's entry is loaded whole at once and its thread may be ended
 *   without an exit event: it writes its caches right after.
 * - `ready`: the process says when it is ready (`writeCaches`, the daemon and the supervisor
 *   once they serve); at exit it writes only the caches of chunks loaded since without one, so
 *   that the caches of its start hold what its start runs, not all it ran in its life. Such a
 *   process lives long: it holds its build's files open from the start (`held`).
 */
export function run(entry: string, opts: { worker?: boolean; ready?: boolean } = {}): void {
  if (caching) process.once("exit", () => writeCaches(opts.ready));
  // (a worker thread loads all it runs at once; the client ends before a build could matter)
  if (opts.ready) holdBundle();
  load(entry);
  if (opts.worker && caching) setImmediate(writeCaches);
}
