/**
 * Which file runs a module the daemon loads by its path (a built-in plugin, the supervisor's
 * entry, a worker's): the module itself, as tsc wrote it under `dist/`, or its entry in the
 * daemon's bundle. (A plugin's manifest has none: it imports nothing at run time, and is
 * imported as it is.)
 *
 * `bin/engined` runs the bundle (`dist/engined-bundle/`, written by scripts/bundle-engined.mjs):
 * a few files instead of some 600 modules, which is most of what a start took. Its entries share
 * their chunks, so a built-in plugin imported from its bundle entry uses the daemon's own copy
 * of core; imported from `dist/plugins/...` it would load a second copy beside it (two
 * `EngineError` classes, two of every module's state). Plugins are still found where they are
 * today (their folders and manifests under `dist/plugins`, third-party packages in
 * `node_modules`); only the import is of the bundle's entry, when the bundle has one.
 * The bundle's chunks are CommonJS module bodies run by core/chunk-loader.cts: an entry is
 * loaded through it (`importModule`), a process or thread runs its launcher (`runnableFile`).
 * The same code run from its modules (the tests' in-process daemons, `node dist/host/engined.js`)
 * imports every file as it is.
 */
import { existsSync } from "node:fs";
import { relative, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { ChunkLoader } from "../core/chunk-loader.cjs";

// Replaced by `true` in the bundle (esbuild's `define`); undeclared, and so "undefined", in the modules.
declare const ENGINE_BUNDLED: boolean | undefined;
// In the bundle, the loader that runs its chunks (a parameter of each chunk's function).
declare const __engineLoader: ChunkLoader;

/** Whether this code runs from the bundle. */
export const inBundle = typeof ENGINE_BUNDLED === "boolean" && ENGINE_BUNDLED;

// dist/ (in the bundle, import.meta.url is still this module's place under dist/: the bundler
// rewrites it so that every path a module finds beside itself stays what it was)
const DIST = fileURLToPath(new URL("..", import.meta.url));

/** The bundle's folder, beside the modules. */
export const BUNDLE_DIR = `${DIST}engined-bundle`;

/**
 * The name of a module's entry in the bundle: its path under dist/ with its folders joined by
 * dots (`plugins/log-json-file/index.js` -> `plugins.log-json-file.index.js`). The bundling
 * script names its entries by this rule.
 */
export function bundleEntryName(pathUnderDist: string): string {
  return pathUnderDist.split(sep).join(".");
}

/** The bundle entry of the module `file` when running bundled and there is one. */
function bundleEntry(file: string): string | undefined {
  if (!inBundle) return undefined;
  const under = relative(DIST, file);
  if (under.startsWith("..")) return undefined;
  const name = bundleEntryName(under).replace(/\.js$/, ".cjs");
  return existsSync(`${BUNDLE_DIR}/${name}`) ? name : undefined;
}

/** Imports the module `file`: from its bundle entry when there is one, else as it is. */
export function importModule(file: string): Promise<Record<string, unknown>> {
  const entry = bundleEntry(file);
  if (entry) return Promise.resolve(__engineLoader.load(entry) as Record<string, unknown>);
  const url = pathToFileURL(file).href;
  // (in the bundle, import() is require() in a promise: Node's own import() is the loader's)
  return (inBundle ? __engineLoader.importNative(url) : import(url)) as Promise<Record<string, unknown>>;
}

/** The file a process or thread runs for the module `file`: its bundle entry's launcher when running bundled. */
export function runnableFile(file: string): string {
  const entry = bundleEntry(file);
  return entry ? `${BUNDLE_DIR}/${entry.replace(/\.cjs$/, ".run.cjs")}` : file;
}

/** Tells the bundle's loader that the process is ready: it writes the code caches of its start. */
export function startDone(): void {
  if (inBundle) __engineLoader.writeCaches();
}
