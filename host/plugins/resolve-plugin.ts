/**
 * Finds the module of a plugin selected by name, in this order:
 *   1. a path (absolute, or starting with `./` or `../`): a module file or a package folder, only
 *      when the operator chose it (a flag, `daemon.json`); a name from an API request is never a
 *      path (ENGINE_ERR_PLUGIN_PATH_FROM_CLIENT, and nothing is loaded), since importing a module
 *      runs its code as root, in the daemon or the supervisor;
 *   2. the built-in folder `plugins/<kind>-<name>/`;
 *   3. an installed package `engine-plugin-<kind>-<name>`, in the `node_modules` folders of the
 *      daemon's working directory and its parents, then of the engine's own installation.
 * What was tried is kept, so that a plugin that is nowhere is reported with every place looked.
 * (Authorization plugins may also be servers in other processes: `host/authz-chain.ts` looks
 * for those when no module has the name.)
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { errors } from "../../core/errors.js";

export interface PluginLocation {
  /** The module file to import. */
  file: string;
  /** How it was found, for logs: "built-in", "package engine-plugin-authz-x", "path". */
  source: string;
}

export interface ResolveOptions {
  /** Where built-in plugins live (compiled): `dist/plugins`. */
  builtinDir: string;
  /** Folders whose `node_modules` (and their parents') hold installed plugin packages. */
  searchFrom: string[];
}

const here = dirname(fileURLToPath(import.meta.url));

export function defaultResolveOptions(): ResolveOptions {
  // dist/host/plugins -> dist/plugins; the engine's own root is two levels above dist.
  const builtinDir = resolve(here, "../../plugins");
  return { builtinDir, searchFrom: [process.cwd(), resolve(builtinDir, "../..")] };
}

/**
 * Who named a plugin: the operator (flags, `daemon.json`: a path is theirs to give) or an API
 * client (a driver in a request body, or stored from one: by name only).
 */
export type ChosenBy = "operator" | "client";

export function isPathReference(name: string): boolean {
  return isAbsolute(name) || name.startsWith("./") || name.startsWith("../");
}

export function resolvePlugin(kind: string, name: string, opts: ResolveOptions, chosenBy: ChosenBy = "operator"): PluginLocation {
  if (chosenBy === "client" && isPathReference(name)) throw errors.pluginPathFromClient(kind, name);
  const found = findPluginModule(kind, name, opts);
  if ("file" in found) return found;
  throw errors.pluginNotFound(`${kind} plugin`, name, found.tried);
}

/** The plugin's module, or every place looked at when there is none. */
export function findPluginModule(kind: string, name: string, opts: ResolveOptions): PluginLocation | { tried: string[] } {
  const tried: string[] = [];
  if (isPathReference(name)) {
    const file = moduleIn(resolve(name));
    return file ? { file, source: "path" } : { tried: [`the path ${resolve(name)}`] };
  }
  if (!/^[a-z0-9][a-z0-9._-]*$/.test(name)) {
    return { tried: ["nothing: a plugin name has only a-z, 0-9, '.', '_' and '-'"] };
  }
  const builtin = join(opts.builtinDir, `${kind}-${name}`);
  tried.push(`the built-in plugin ${builtin}`);
  const builtinFile = moduleIn(builtin);
  if (builtinFile) return { file: builtinFile, source: "built-in" };

  const pkg = `engine-plugin-${kind}-${name}`;
  for (const start of opts.searchFrom) {
    for (let dir = resolve(start); ; dir = dirname(dir)) {
      const candidate = join(dir, "node_modules", pkg);
      tried.push(`the package ${candidate}`);
      const file = moduleIn(candidate);
      if (file) return { file, source: `package ${pkg}` };
      if (dirname(dir) === dir) break;
    }
  }
  return { tried: dedupe(tried) };
}

/** The entry module of a file or package folder, or undefined when there is none. */
function moduleIn(path: string): string | undefined {
  if (!existsSync(path)) return undefined;
  if (statSync(path).isFile()) return path;
  const manifest = join(path, "package.json");
  if (existsSync(manifest)) {
    const pkg = JSON.parse(readFileSync(manifest, "utf8")) as { main?: string; exports?: unknown };
    const entry = exportEntry(pkg.exports) ?? pkg.main;
    if (entry && existsSync(join(path, entry))) return join(path, entry);
  }
  for (const index of ["index.js", "index.mjs", "index.cjs"]) {
    if (existsSync(join(path, index))) return join(path, index);
  }
  return undefined;
}

/** The `.` entry of a package's `exports`, for an ESM import. */
function exportEntry(exports: unknown): string | undefined {
  if (typeof exports === "string") return exports;
  if (!exports || typeof exports !== "object") return undefined;
  const record = exports as Record<string, unknown>;
  const dot = "." in record ? record["."] : record;
  if (typeof dot === "string") return dot;
  if (dot && typeof dot === "object") {
    for (const condition of ["import", "node", "default"]) {
      const value = (dot as Record<string, unknown>)[condition];
      if (typeof value === "string") return value;
    }
  }
  return undefined;
}

function dedupe(list: string[]): string[] {
  return [...new Set(list)];
}
