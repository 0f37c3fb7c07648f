/**
 * The CDI devices of the spec directories (`--cdi-spec-dir`, `cdi-spec-dirs`), as the CDI
 * specification and its library find them:
 * - every `*.json` and `*.yaml` file directly in a directory is a spec file (subdirectories and
 *   other files are skipped; a directory that does not exist holds nothing);
 * - a directory's priority is its place in the list: a device defined in a later directory
 *   overrides the same device of an earlier one; the same device twice in one directory is a
 *   conflict, and neither definition is used;
 * - a file that cannot be read or fails a check gives no device, and its error is kept for
 *   `/info`'s warnings.
 * Each use (`refresh`, called before every injection and listing) looks at the directories
 * again; a file is read and parsed again only when its inode, size, mtime or ctime changed, so that a
 * vendor's new or edited spec is seen by the next container without a restart.
 */
import { readdir, readFile, realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import { applyCdiEdits } from "../../core/devices/cdi-edits.js";
import { parseQualifiedName } from "../../core/devices/cdi-names.js";
import { parseCdiSpec, type CdiContainerEdits, type CdiDevice, type CdiSpec } from "../../core/devices/cdi-spec.js";
import type { OciSpec } from "../../core/contracts/runtime.js";

export interface CdiDeviceEntry {
  /** `vendor/class=name`. */
  id: string;
  device: CdiDevice;
  spec: CdiSpec;
  /** The spec file. */
  path: string;
  priority: number;
}

export interface CdiScan {
  /** By qualified name, sorted. */
  devices: Map<string, CdiDeviceEntry>;
  /** Problems by spec file or directory. */
  errors: Map<string, string[]>;
}

interface CachedFile {
  stamp: string;
  spec?: CdiSpec;
  error?: string;
}

const isSpecFile = (name: string) => name.endsWith(".json") || name.endsWith(".yaml");

export class CdiCache {
  private readonly files = new Map<string, CachedFile>();

  /** `dirs` in priority order, lowest first. */
  constructor(readonly dirs: readonly string[]) {}

  /** Looks at the directories again; answers what they define now. */
  async refresh(): Promise<CdiScan> {
    const devices = new Map<string, CdiDeviceEntry>();
    const errors = new Map<string, string[]>();
    const conflicts = new Set<string>();
    const seen = new Set<string>();
    const note = (path: string, problem: string) => errors.set(path, [...(errors.get(path) ?? []), problem]);
    for (const [priority, dir] of this.dirs.entries()) {
      for (const path of await this.specFiles(dir, note)) {
        seen.add(path);
        const file = await this.load(path);
        if (file.error !== undefined) note(path, file.error);
        if (!file.spec) continue;
        for (const device of file.spec.devices) {
          const id = `${file.spec.kind}=${device.name}`;
          const other = devices.get(id);
          if (other && other.priority === priority) {
            conflicts.add(id);
            for (const p of [path, other.path]) note(p, `conflicting device "${id}" (specs ${path} and ${other.path})`);
            continue;
          }
          devices.set(id, { id, device, spec: file.spec, path, priority });
        }
      }
    }
    for (const id of conflicts) devices.delete(id);
    for (const path of this.files.keys()) if (!seen.has(path)) this.files.delete(path);
    return { devices: new Map([...devices].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))), errors };
  }

  /**
   * Applies the edits of the devices `ids` (and, once per spec file, the file's own edits) to
   * `spec`. Throws "unresolvable CDI devices ..." naming every id no spec defines, or the reason
   * an edit could not be made (a host device that is not there).
   */
  async inject(spec: OciSpec, ids: readonly string[]): Promise<OciSpec> {
    const { devices } = await this.refresh();
    const unresolved = ids.filter((id) => !devices.has(id));
    if (unresolved.length > 0) {
      const why = unresolved.flatMap((id) => {
        try {
          parseQualifiedName(id);
          return [];
        } catch (err) {
          return [(err as Error).message];
        }
      });
      throw new Error(`unresolvable CDI devices ${unresolved.join(", ")}${why.length ? ` (${why.join("; ")})` : ""}`);
    }
    const edits: CdiContainerEdits[] = [];
    const specsDone = new Set<CdiSpec>();
    for (const id of ids) {
      const entry = devices.get(id)!;
      if (!specsDone.has(entry.spec)) {
        specsDone.add(entry.spec);
        if (entry.spec.containerEdits) edits.push(entry.spec.containerEdits);
      }
      edits.push(entry.device.containerEdits);
    }
    try {
      return applyCdiEdits(spec, edits);
    } catch (err) {
      throw new Error(`failed to inject devices: ${(err as Error).message}`);
    }
  }

  /** The spec files directly in `dir`, in name order; a missing directory has none. */
  private async specFiles(dir: string, note: (path: string, problem: string) => void): Promise<string[]> {
    let real: string;
    let names: string[];
    try {
      real = await realpath(dir);
      const entries = await readdir(real, { withFileTypes: true });
      names = entries.filter((e) => !e.isDirectory() && isSpecFile(e.name)).map((e) => e.name).sort();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") note(dir, `cannot read the CDI spec directory: ${(err as Error).message}`);
      return [];
    }
    return names.map((n) => join(real, n));
  }

  private async load(path: string): Promise<CachedFile> {
    let stamp: string;
    try {
      const st = await stat(path, { bigint: true });
      if (!st.isFile()) return { stamp: "", error: "not a regular file" };
      stamp = `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
    } catch (err) {
      return { stamp: "", error: `failed to read CDI spec: ${(err as Error).message}` };
    }
    const cached = this.files.get(path);
    if (cached?.stamp === stamp) return cached;
    let file: CachedFile;
    try {
      file = { stamp, spec: await parseCdiSpec(await readFile(path, "utf8"), path) };
    } catch (err) {
      file = { stamp, error: `invalid CDI spec: ${(err as Error).message}` };
    }
    this.files.set(path, file);
    return file;
  }
}
