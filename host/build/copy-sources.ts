/**
 * What a `COPY` or `ADD` copies: its sources found in the build context (or, with `--from`, in a
 * stage's or an image's root filesystem), as Docker's classic builder finds them:
 * - a source is cleaned and may not climb out of the context (`../x` is refused);
 * - symlinks on the way are followed inside the root, never out of it;
 * - a source with `*`, `?` or `[...]` is a pattern matched one path element at a time (Go's
 *   `filepath.Match`: `*` never crosses a `/`); a pattern that matches nothing is an error;
 * - each source's checksum names it in the step's history and cache key: `file:<sha256>` for a
 *   file, `dir:<sha256>` for a folder (its whole tree: names, types, modes, owners, sizes, link
 *   targets and contents), `multi:<sha256>` over several.
 */
import { createHash } from "node:crypto";
import { createReadStream, lstatSync, readdirSync, readlinkSync, type Stats } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, posix } from "node:path";
import { errors } from "../../core/errors.js";
import { ScopedRoot } from "../containers/files/scoped-fs.js";

export interface CopySource {
  /** The path on the host to read (inside the context or the mounted root). */
  hostPath: string;
  /** The source's path inside its root, symlinks resolved (`/dir/file`). */
  path: string;
  stats: Stats;
  /** Downloaded by ADD: its checksum is the bare hex, with no `file:`, as Docker's history shows it. */
  remote?: boolean;
}

const MAGIC = /[*?[\\]/;

/** Go's `filepath.Match` on one path element. */
function matchElement(pattern: string, name: string): boolean {
  let re = "^";
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === "*") re += "[^/]*";
    else if (ch === "?") re += "[^/]";
    else if (ch === "\\" && i + 1 < pattern.length) re += escapeRe(pattern[++i]);
    else if (ch === "[") {
      const end = pattern.indexOf("]", i + 2);
      if (end < 0) throw errors.buildCopyFailed("COPY", `syntax error in pattern: ${pattern}`);
      let body = pattern.slice(i + 1, end);
      if (body.startsWith("^")) body = `^${body.slice(1)}`;
      re += `[${body.replace(/\\/g, "\\\\")}]`;
      i = end;
    } else re += escapeRe(ch);
  }
  return new RegExp(`${re}$`, "s").test(name);
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/** `src` as a path inside the root, or the error Docker gives for one that climbs out. */
function cleanSource(instruction: string, src: string): string {
  const cleaned = posix.normalize(src.startsWith("/") ? src.slice(1) || "." : src);
  if (cleaned === ".." || cleaned.startsWith("../")) throw errors.buildCopyOutsideContext(instruction, src);
  return cleaned === "." ? "" : cleaned.replace(/\/$/, "");
}

/** Every path of the root that `pattern` (cleaned, relative) matches, element by element. */
function expandPattern(rootDir: string, pattern: string): string[] {
  let found = [""];
  for (const element of pattern.split("/")) {
    const next: string[] = [];
    for (const dir of found) {
      if (!MAGIC.test(element)) {
        next.push(dir ? `${dir}/${element}` : element);
        continue;
      }
      let names: string[];
      try {
        names = readdirSync(join(rootDir, dir));
      } catch {
        continue;
      }
      for (const n of names.sort()) if (matchElement(element, n)) next.push(dir ? `${dir}/${n}` : n);
    }
    found = next;
  }
  return found;
}

/**
 * The sources of one instruction. `rootDir` is the context's folder or a mounted root file
 * system; paths are resolved inside it (symlinks too).
 */
export function findSources(instruction: string, rootDir: string, sources: readonly string[]): CopySource[] {
  const root = ScopedRoot.open(rootDir);
  try {
    const out: CopySource[] = [];
    for (const src of sources) {
      const cleaned = cleanSource(instruction, src);
      const wild = MAGIC.test(cleaned);
      const paths = wild ? expandPattern(rootDir, cleaned) : [cleaned];
      if (wild && paths.length === 0) throw errors.buildCopyFailed(instruction, "no source files were specified");
      for (const p of paths) {
        let resolved: string;
        try {
          const r = root.resolve(p, { followLast: true });
          resolved = r.path;
          r.close();
        } catch {
          throw errors.buildCopyNotFound(instruction, p || ".");
        }
        const hostPath = join(rootDir, resolved);
        let stats: Stats;
        try {
          stats = lstatSync(hostPath);
        } catch {
          throw errors.buildCopyNotFound(instruction, p || ".");
        }
        out.push({ hostPath, path: resolved, stats });
      }
    }
    return out;
  } finally {
    root.close();
  }
}

/** One entry of a source's tree, in the order it is copied (a folder before what it holds). */
export interface TreeEntry {
  /** Relative to the source (`""` for the source itself). */
  rel: string;
  hostPath: string;
  stats: Stats;
}

/** The source and, for a folder, everything under it, names sorted; devices, FIFOs and sockets are left out. */
export function* walkSource(source: CopySource): Generator<TreeEntry> {
  const stack: TreeEntry[] = [{ rel: "", hostPath: source.hostPath, stats: source.stats }];
  while (stack.length > 0) {
    const e = stack.pop()!;
    if (!e.stats.isFile() && !e.stats.isDirectory() && !e.stats.isSymbolicLink()) continue;
    yield e;
    if (!e.stats.isDirectory()) continue;
    const names = readdirSync(e.hostPath).sort().reverse();
    for (const n of names) {
      const hostPath = join(e.hostPath, n);
      stack.push({ rel: e.rel ? `${e.rel}/${n}` : n, hostPath, stats: lstatSync(hostPath) });
    }
  }
}

/** Files up to this size are read in one call: a stream per small file costs ten times the read (bench/build.mjs). */
const SMALL_FILE = 256 * 1024;

async function fileDigest(path: string, size: number): Promise<string> {
  const hash = createHash("sha256");
  if (size <= SMALL_FILE) return hash.update(await readFile(path)).digest("hex");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** `file:<hex>`, `dir:<hex>`, or `multi:<hex>` over several sources. */
export async function sourcesChecksum(sources: readonly CopySource[], extra: readonly string[] = []): Promise<string> {
  const one = async (s: CopySource): Promise<string> => {
    const hash = createHash("sha256");
    for (const e of walkSource(s)) {
      const st = e.stats;
      const kind = st.isDirectory() ? "d" : st.isSymbolicLink() ? "l" : "f";
      hash.update(`${e.rel}\0${kind}\0${st.mode & 0o7777}\0${st.uid}\0${st.gid}\0${kind === "f" ? st.size : 0}\0`);
      if (kind === "l") hash.update(readlinkSync(e.hostPath));
      if (kind === "f") hash.update(await fileDigest(e.hostPath, st.size));
      hash.update("\n");
    }
    if (s.remote) return hash.digest("hex");
    return `${s.stats.isDirectory() ? "dir" : "file"}:${hash.digest("hex")}`;
  };
  const each = [...(await Promise.all(sources.map(one))), ...extra];
  if (each.length === 1) return each[0];
  return `multi:${createHash("sha256").update(each.join(",")).digest("hex")}`;
}
