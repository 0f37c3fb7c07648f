// Bundles the `engine` client (dist/cli, as tsc built it) into dist/client/, which bin/engine
// runs: a command's start is mostly Node loading modules, about a third of a millisecond each
// (resolve, read, link) whatever their size, and `engine ps` loaded 31 of them, `engine run` 48.
// Bundled, `ps` loads 10 files, `run` 13, `--version` 7. How:
//
// - One output per dynamic import (each command, and what loads only when used: TLS, SSH,
//   contexts...), code shared by several of them in chunks (esbuild's code splitting). Left
//   alone, esbuild would cut what engine.js loads at start into as many chunks as there are
//   sets of commands importing each piece (19 files for `engine --version`): every dynamic
//   entry is given an import of all of it here, so that it all shares one chunk; the same for
//   cli/format and cli/container (see groupsOf).
// - The chunks are then made CommonJS module bodies, which main.cjs (core/chunk-loader.cts)
//   loads with V8 code caches made after a command ran: no ES module loader, and no ES module
//   facades of built-ins, which read every export, lazy ones too (node:fs's ReadStream and
//   promises load node:internal/fs/streams, readline...: 5 ms); a built-in is require()d.
// - npm packages stay outside (loaded from node_modules when a command needs them).
// - Every output sits in dist/client/, one folder below dist/ like dist/core/: the modules that
//   find files from import.meta.url (core/version.ts: ../../package.json, ../build-info.json)
//   find the same ones.
//
//   node scripts/bundle-client.mjs        (the build runs it after tsc)
import { build } from "esbuild";
import { asChunkBodies, launcher } from "./chunk-bodies.mjs";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, relative } from "node:path";

const ROOT = new URL("..", import.meta.url).pathname;
const DIST = join(ROOT, "dist");
const OUT = join(DIST, "client");
/** The loader's code caches (core/chunk-loader.cts): those of an earlier build are stale. */
const CACHE = join(DIST, ".code-cache/client");
const ENTRY = join(DIST, "cli/engine.js");
const BARREL = "engine-barrel";
const START = "engine-start-modules";
const GROUP = "engine-group:";
/** Folders whose modules are bundled as one piece (see groupsOf). */
const GROUPS = ["dist/cli/format", "dist/cli/container"];

const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));

const common = {
  entryPoints: { engine: ENTRY },
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node24",
  packages: "external",
  logLevel: "warning",
  absWorkingDir: ROOT,
};

/**
 * The static imports between the client's modules (as esbuild resolves them; built-ins and npm
 * packages are external, not in it), the modules engine.js loads at every start, and the
 * entries: engine.js and the targets of dynamic imports.
 */
async function moduleGraph() {
  const { metafile } = await build({ ...common, outdir: OUT, write: false, metafile: true });
  const imports = new Map(Object.entries(metafile.inputs).map(([path, i]) => [path, i.imports.filter((x) => x.kind === "import-statement" && !x.external).map((x) => x.path)]));
  const start = new Set();
  const visit = (path) => {
    if (start.has(path) || !imports.has(path)) return;
    start.add(path);
    imports.get(path).forEach(visit);
  };
  visit(relative(ROOT, ENTRY));
  const dynamic = new Set(Object.values(metafile.inputs).flatMap((i) => i.imports.filter((x) => x.kind === "dynamic-import" && !x.external).map((x) => x.path)));
  const packageUsers = new Set(Object.entries(metafile.inputs).filter(([, i]) => i.imports.some((x) => x.external && !builtins.has(x.path))).map(([p]) => p));
  return { imports, start, dynamic: [...dynamic].filter((p) => !start.has(p)), packageUsers };
}

/**
 * What each dynamic entry is made to import first, so that modules load in few files:
 * - every module engine.js loads at start (they are all loaded by then anyway), in one chunk;
 * - of each folder in GROUPS it uses a module of, all the modules, so that the folder is one
 *   chunk rather than one per set of commands using each of its files (`engine ps` loaded 7
 *   pieces of cli/format that way). A group leaves out start modules, entries (an entry stays
 *   what loads it alone), modules that import an npm package (whose load costs more than any
 *   file: they load only where they did) and modules that import from another group's folder
 *   (which would bring that group to every command using this one: cli/container's
 *   stats-collector.js brought cli/format to `engine run`).
 */
function groupsOf({ imports, start, dynamic, packageUsers }) {
  const entries = new Set(dynamic);
  const members = new Map(
    GROUPS.map((g) => {
      let group = [...imports.keys()].filter((m) => dirname(m) === g && !start.has(m) && !entries.has(m) && !packageUsers.has(m));
      for (let size = -1; size !== group.length; ) {
        size = group.length;
        const inside = new Set(group);
        group = group.filter((m) => imports.get(m).every((i) => inside.has(i) || (dirname(i) !== g && !GROUPS.includes(dirname(i)))));
      }
      return [g, group];
    }),
  );
  const needs = new Map();
  for (const entry of dynamic) {
    const reached = new Set();
    const queue = [...imports.get(entry)];
    while (queue.length) {
      const m = queue.pop();
      if (reached.has(m) || start.has(m)) continue;
      reached.add(m);
      queue.push(...(imports.get(m) ?? []));
    }
    needs.set(entry, GROUPS.filter((g) => members.get(g).some((m) => reached.has(m))));
  }
  return { members, needs };
}

/** A module's path as an import. */
const importOf = (p) => `import ${JSON.stringify(join(ROOT, p))};`;

function fewerChunks(graph) {
  const { members, needs } = groupsOf(graph);
  const barrels = new Map([[START, [...graph.start]], ...[...members].map(([g, ms]) => [`${GROUP}${g}`, ms])]);
  const prefixes = new Map([...needs].map(([entry, groups]) => [join(ROOT, entry), [START, ...groups.map((g) => `${GROUP}${g}`)]]));
  return {
    name: "fewer-chunks",
    setup(b) {
      b.onResolve({ filter: new RegExp(`^(${START}|${GROUP}.*)$`) }, (a) => ({ path: a.path, namespace: BARREL }));
      b.onLoad({ filter: /.*/, namespace: BARREL }, (a) => ({ contents: barrels.get(a.path).map(importOf).join("\n"), loader: "js", resolveDir: DIST }));
      b.onLoad({ filter: /\.js$/ }, (a) => {
        const first = prefixes.get(a.path);
        if (!first) return undefined;
        return { contents: `${first.map((b) => `import "${b}";`).join("\n")}\n${readFileSync(a.path, "utf8")}`, loader: "js" };
      });
    },
  };
}

const graph = await moduleGraph();
rmSync(OUT, { recursive: true, force: true });
rmSync(CACHE, { recursive: true, force: true });
const { metafile } = await build({
  ...common,
  outdir: OUT,
  entryNames: "[name]-[hash]",
  chunkNames: "shared-[hash]",
  outExtension: { ".js": ".cjs" },
  metafile: true,
  plugins: [fewerChunks(graph)],
});
await asChunkBodies(Object.keys(metafile.outputs).map((f) => join(ROOT, f)));
const engine = Object.entries(metafile.outputs).find(([, o]) => o.entryPoint && o.entryPoint.endsWith("cli/engine.js"))[0];
writeFileSync(join(OUT, "main.cjs"), launcher(engine.split("/").pop()));
