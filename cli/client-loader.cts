/**
 * What `bin/engine` runs (copied to dist/client/main.cjs by scripts/bundle-client.mjs, which
 * names the entry chunk): loads the client's bundled chunks, each the body of a CommonJS module,
 * with V8 code caches made after the command has run.
 *
 * Why not Node's own module compile cache, which the client used before: Node makes its cache
 * when it compiles a file, before the file runs, and V8 compiles a function only when it is
 * first called, so that cache holds little more than each file's top level; every run compiled
 * again the functions a command calls (`engine ps`: some 15% of its whole time). A cache made
 * with `createCachedData()` once the command is done holds all of them. And no ES module loader:
 * a chunk is read, compiled from its cache and run, without resolution, links or facades.
 *
 * The cache, `dist/.client-cache/<chunk>.v8`, holds the keys of the runs it covers (its layout:
 * readCache). A key is the set of chunks a run loaded (each command is a chunk of its own, so
 * the key tells commands apart, and flags that load more code). A run whose key a chunk's cache
 * lacks, or whose cache V8 refused (another Node, other V8 flags) or was damaged, writes that
 * chunk's cache again at exit, from everything compiled so far, so each cache grows to what the
 * commands used. Written to a temporary name and renamed: a reader sees a whole cache or none.
 *
 * Where, and who may write it: beside the code, as core/compile-cache.ts explains (a cache is
 * code the client runs; it is kept where only the code's owner can write). A user who cannot
 * write there runs without one. `NODE_DISABLE_COMPILE_CACHE=1` turns both caches off.
 */
const fs = process.getBuiltinModule("node:fs");
const vm = process.getBuiltinModule("node:vm");
const { createRequire, enableCompileCache } = process.getBuiltinModule("node:module");

/** Replaced by scripts/bundle-client.mjs with the engine entry chunk's file name. */
const ENTRY = "@ENTRY@";
const CACHE_DIR = `${__dirname}/../.client-cache`;
/** import.meta.url of the chunks, which sit beside this file (as pathToFileURL makes it, without its cost). */
const BASE_URL = `file://${encodeURI(__dirname).replace(/[?#]/g, encodeURIComponent)}/`;
const COMPILE_CACHE_DIR = `${__dirname}/../.compile-cache`;
const caching = !process.env.NODE_DISABLE_COMPILE_CACHE;
/** npm packages (tar-stream, ssh2): Node's require, its compile cache turned on at the first. */
const requirePackage = createRequire(__filename);
let packagesCached = false;

interface Chunk {
  name: string;
  script: InstanceType<typeof vm.Script>;
  /** The run keys its cache covers; undefined when there was none or V8 refused it. */
  keys: number[] | undefined;
}
const chunks: Chunk[] = [];
const loaded = new Map<string, { exports: object }>();

/**
 * A cache file: the byte length of a JSON list of keys, the list, then V8's data twice. Twice,
 * because V8 does not check its code cache's checksum in release builds and a flipped bit in it
 * crashes the process (test/client-loader.test.ts: "Fatal error ... unreachable code"), and
 * again at every run; comparing two copies is a native memcmp, where a checksum computed in
 * JavaScript at start costs 2 ms and loading node:zlib for its CRC-32 nearly 3.
 */
function readCache(name: string): { keys: number[]; data: Buffer } | undefined {
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
    const data = file.subarray(start, start + size);
    if (!Number.isInteger(size) || size === 0 || !data.equals(file.subarray(start + size))) return undefined;
    return { keys: JSON.parse(file.toString("utf8", 4, start)) as number[], data };
  } catch {
    return undefined; // cut short or damaged: compiled afresh, and written again at exit
  }
}

function requireFrom(specifier: string): unknown {
  if (specifier.startsWith("./")) return load(specifier.slice(2));
  if (!packagesCached && caching && !specifier.startsWith("node:")) {
    packagesCached = true;
    enableCompileCache(COMPILE_CACHE_DIR);
  }
  return requirePackage(specifier);
}

function load(name: string): object {
  const done = loaded.get(name);
  if (done) return done.exports;
  const file = `${__dirname}/${name}`;
  const source = fs.readFileSync(file, "utf8");
  const cache = readCache(name);
  // the wrapper is on the first line, as Node's own, so that stack traces keep the chunk's lines
  const script = new vm.Script(`(function (exports, require, module, __importMetaUrl) {${source}\n})`, { filename: file, cachedData: cache?.data });
  chunks.push({ name, script, keys: cache && !script.cachedDataRejected ? cache.keys : undefined });
  const module = { exports: {} };
  loaded.set(name, module);
  script.runInThisContext()(module.exports, requireFrom, module, BASE_URL + name);
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

function writeCaches(): void {
  const key = runKey();
  for (const chunk of chunks) {
    if (chunk.keys?.includes(key)) continue;
    const temporary = `${CACHE_DIR}/${chunk.name}.v8.${process.pid}`;
    try {
      const keys = Buffer.from(JSON.stringify([...(chunk.keys ?? []), key]));
      const length = Buffer.alloc(4);
      length.writeUInt32LE(keys.length);
      fs.mkdirSync(CACHE_DIR, { recursive: true, mode: 0o755 });
      const data = chunk.script.createCachedData();
      fs.writeFileSync(temporary, Buffer.concat([length, keys, data, data]), { mode: 0o644 });
      fs.renameSync(temporary, `${CACHE_DIR}/${chunk.name}.v8`);
    } catch {
      // not ours to write (another user's install), or a full disk: the client runs without
      try {
        fs.unlinkSync(temporary);
      } catch {
        // never made
      }
      return;
    }
  }
}

if (caching) process.once("exit", writeCaches);
load(ENTRY);
