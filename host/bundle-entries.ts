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
 * The same code run from its modules (the tests' in-process daemons, `node dist/host/engined.js`)
 * imports every file as it is.
 */
import { existsSync } from "node:fs";
import { relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

// Replaced by `true` in the bundle (esbuild's `define`); undeclared, and so "undefined", in the modules.
declare const ENGINE_BUNDLED: boolean | undefined;

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

/** The file to import (or run) for the module `file`: its bundle entry when running bundled and there is one. */
export function runnableFile(file: string): string {
  if (!inBundle) return file;
  const under = relative(DIST, file);
  if (under.startsWith("..")) return file;
  const entry = `${BUNDLE_DIR}/${bundleEntryName(under)}`;
  return existsSync(entry) ? entry : file;
}
