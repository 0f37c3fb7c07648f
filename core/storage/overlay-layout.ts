/**
 * The overlay layout, shared by the drivers that stack layer directories with an overlay
 * filesystem (overlay2 through the kernel, fuse-overlayfs through FUSE): every layer is a
 * directory of its own files (`diff`), and a chain is seen through one overlay mount of the diffs
 * of the layer and its ancestors. A driver subclasses `OverlayLayout` and adds what is its own:
 * how whiteouts are kept in `diff` (applyDiff, diff), the mount type, per-layer options, status.
 *
 * Layout under `home` (`<data-root>/<driver name>`):
 *   <id>/diff         the layer's own files
 *   <id>/link         the layer's short name: 26 characters of base32
 *   <id>/lower        the short names of its ancestors, nearest first: `l/A:l/B:...` (absent
 *                     for a base layer)
 *   <id>/parent       the parent's id (absent for a base layer)
 *   <id>/work         the overlay's work directory; only writable layers have one, and its
 *                     presence is what makes a layer writable
 *   <id>/.incomplete  present while `create` or `applyDiff` runs; `cleanup()` removes layers
 *                     that still carry it
 *   l/<short>         a symlink to `../<id>/diff`, so that mount options name layers by their
 *                     short names and deep chains fit in a page of mount options
 *   .removing-*       a layer being removed (renamed first, then deleted); `cleanup()` finishes it
 * A driver may keep files of its own in `<id>/` (overlay2: `quota`).
 *
 * Mount specifications: a base layer is a bind mount of its diff; a chain is one overlay mount,
 * with absolute paths (`lowerdir=<home>/l/A:...`) when the options fit in a page (4095 bytes),
 * otherwise with paths relative to `home` (`lowerdir=l/A:...,upperdir=<id>/diff`) and the
 * specification's `cwd` saying where the mount must be made from.
 */
import { randomBytes } from "node:crypto";
import { chownSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { lstat, mkdir, readdir, readFile, readlink, rename, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { DIR_FLAGS, lstatAt, readdirFd, tryOpenDirAt } from "../fs/at.js";
import type { CreateOptions, LayerUsage, MountSpec } from "../contracts/storage.js";
import { rootOwner, type IdMap } from "../userns/id-map.js";
import { readOptional, readOptionalSync } from "./read-optional.js";

/** Entries counted between two turns of the event loop in `usage`. */
const USAGE_ENTRIES_PER_TURN = 4096;

/** The kernel copies one page of mount options; 4096 minus the closing NUL. */
export const MOUNT_OPTIONS_MAX = 4095;
/** The most ancestors a layer may have: its chain must still fit in a page of mount options. */
export const MAX_DEPTH = 125;

const LINK_DIR = "l";
const INCOMPLETE = ".incomplete";
const REMOVING = ".removing-";
const ID_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** 16 random bytes as 26 characters of RFC 4648 base32, without padding. */
export function shortId(): string {
  const bytes = randomBytes(16);
  let bits = 0;
  let value = 0;
  let out = "";
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** What a chain's overlay mount is, beyond its directories. */
export interface OverlayMountKind {
  /** The mount type (`overlay`, `fuse.fuse-overlayfs`). */
  type: string;
  /** The mount source as mountinfo will show it. */
  source: string;
  /** Options every such mount carries, before the directories. */
  options: readonly string[];
}

/** A step that finishes a new layer's folder (a quota on a writable layer's `diff`). */
export type LayerSetup = (dir: string) => Promise<void>;

export abstract class OverlayLayout {
  /** The driver's name, which starts its error messages (`overlay2: layer x does not exist`). */
  abstract readonly name: string;
  readonly home: string;

  /** `idMap`: the daemon's user namespace map (`--userns-remap`), when it remaps. */
  constructor(
    home: string,
    protected readonly idMap?: IdMap,
  ) {
    this.home = resolve(home);
  }

  /**
   * Checks a new layer's per-layer options (`CreateOptions.storageOpts`) before anything is made;
   * throws for options the driver cannot honour, and returns the step that applies them to the
   * layer's folder once it is made (after `work`), if any.
   */
  protected abstract layerSetup(id: string, opts: CreateOptions): LayerSetup | undefined;

  /** Releases what the driver keeps for a layer outside its folder (a quota), before the folder goes. */
  protected async releaseLayer(_dir: string): Promise<void> {}

  /** Makes the home's folders. */
  protected async makeHome(): Promise<void> {
    await mkdir(join(this.home, LINK_DIR), { recursive: true, mode: 0o700 });
  }

  /** Under `--userns-remap`, a layer's own folders belong to the remapped root (the root of what a container sees). */
  private giveToRemappedRoot(path: string): void {
    if (!this.idMap) return;
    const owner = rootOwner(this.idMap);
    chownSync(path, owner.uid, owner.gid);
  }

  // --- paths -------------------------------------------------------------------------------------

  protected dir(id: string): string {
    if (!ID_RE.test(id) || id === LINK_DIR) throw new Error(`${this.name}: invalid layer id ${JSON.stringify(id)}`);
    return join(this.home, id);
  }

  /** Throws unless `id` is a whole layer (exists, not half made); resolves with its folder. */
  protected async complete(id: string): Promise<string> {
    const dir = this.dir(id);
    if (!existsSync(join(dir, "diff"))) throw new Error(`${this.name}: layer ${id} does not exist`);
    if (existsSync(join(dir, INCOMPLETE))) throw new Error(`${this.name}: layer ${id} is incomplete`);
    return dir;
  }

  /** Ids of the layers in home (not the link folder, not what is being removed). */
  protected async layerIds(): Promise<string[]> {
    return (await readdir(this.home)).filter((entry) => entry !== LINK_DIR && !entry.startsWith("."));
  }

  // --- layers ------------------------------------------------------------------------------------

  async exists(id: string): Promise<boolean> {
    return existsSync(this.dir(id));
  }

  async parent(id: string): Promise<string | undefined> {
    const dir = this.dir(id);
    if (!existsSync(dir)) throw new Error(`${this.name}: layer ${id} does not exist`);
    return (await readOptional(join(dir, "parent"))) || undefined;
  }

  /**
   * Made with synchronous calls: a layer is a dozen small metadata operations, and each
   * asynchronous one waits for a turn of the event loop. At the start of a pull, while
   * downloads and their decompressors start, those turns are long: a chain of four layers
   * took 200-300 ms to make (the calls themselves, under a millisecond), and no layer's
   * extraction may start before its chain is made. The quota step, a command, stays
   * asynchronous.
   */
  async create(id: string, parent: string | undefined, opts: CreateOptions = {}): Promise<void> {
    const dir = this.dir(id);
    let lower = "";
    if (parent !== undefined) {
      const parentDir = this.dir(parent);
      if (!existsSync(join(parentDir, "diff")) || existsSync(join(parentDir, INCOMPLETE))) {
        throw new Error(`${this.name}: cannot create layer ${id}: parent layer ${parent} does not exist`);
      }
      const parentLink = readFileSync(join(parentDir, "link"), "utf8");
      const parentLower = readOptionalSync(join(parentDir, "lower"));
      lower = parentLower ? `${LINK_DIR}/${parentLink.trim()}:${parentLower}` : `${LINK_DIR}/${parentLink.trim()}`;
      if (lower.split(":").length > MAX_DEPTH) {
        throw new Error(`${this.name}: cannot create layer ${id}: more than ${MAX_DEPTH} layers in its chain`);
      }
    }
    const setup = this.layerSetup(id, opts);

    try {
      // 0700, not Docker's 0710: a root filesystem is mounted under the exec root, never in
      // here (no `merged/`), and the mount reads the layers with the daemon's credentials, so
      // not even a remapped root passes through
      mkdirSync(dir, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") throw new Error(`${this.name}: layer ${id} already exists`);
      throw err;
    }
    let short: string | undefined;
    try {
      writeFileSync(join(dir, INCOMPLETE), "");
      mkdirSync(join(dir, "diff"), { mode: 0o755 });
      this.giveToRemappedRoot(join(dir, "diff"));
      short = this.makeLink(id);
      writeFileSync(join(dir, "link"), short);
      if (parent !== undefined) {
        writeFileSync(join(dir, "lower"), lower);
        writeFileSync(join(dir, "parent"), parent);
      }
      if (opts.writable) {
        mkdirSync(join(dir, "work"), { mode: 0o700 });
        this.giveToRemappedRoot(join(dir, "work"));
      }
      if (setup) await setup(dir);
      unlinkSync(join(dir, INCOMPLETE));
    } catch (err) {
      if (short) await rm(join(this.home, LINK_DIR, short), { force: true }).catch(() => {});
      await this.removeDir(id).catch(() => {});
      throw err;
    }
  }

  /** Makes `l/<short>` -> `../<id>/diff` with a fresh short name. */
  private makeLink(id: string): string {
    for (;;) {
      const short = shortId();
      try {
        symlinkSync(`../${id}/diff`, join(this.home, LINK_DIR, short));
        return short;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
    }
  }

  /** Marks a whole layer incomplete while `fn` fills its `diff`; a failure leaves the mark for the caller (or `cleanup()`). */
  protected async filling<T>(id: string, fn: (diff: string) => Promise<T>): Promise<T> {
    const dir = await this.complete(id);
    await writeFile(join(dir, INCOMPLETE), "");
    const result = await fn(join(dir, "diff"));
    await unlink(join(dir, INCOMPLETE));
    return result;
  }

  /**
   * The mount specification of the chain that ends in `id`: a bind mount of a base layer's
   * diff, or one overlay mount of `kind` stacking the chain (read-only for an image layer; a
   * writable layer's `diff` and `work` on top).
   */
  protected async chainMounts(id: string, kind: OverlayMountKind): Promise<MountSpec[]> {
    const dir = await this.complete(id);
    const writable = existsSync(join(dir, "work"));
    const link = `${LINK_DIR}/${(await readFile(join(dir, "link"), "utf8")).trim()}`;
    const lower = await readOptional(join(dir, "lower"));
    if (!lower) {
      // A base layer: nothing to stack. overlay needs a lower directory, so bind its diff.
      return [{ type: "bind", source: join(dir, "diff"), options: writable ? ["bind"] : ["bind", "ro"] }];
    }
    const lowers = writable ? lower.split(":") : [link, ...lower.split(":")];
    const form = (base: string) => {
      const at = (p: string) => (base ? `${base}/${p}` : p);
      const options = [...kind.options, `lowerdir=${lowers.map(at).join(":")}`];
      if (writable) options.push(`upperdir=${at(`${id}/diff`)}`, `workdir=${at(`${id}/work`)}`);
      return options;
    };
    // Absolute paths when they fit (and the home's path says nothing overlay would misread).
    if (!/[,:\\]/.test(this.home)) {
      const absolute = form(this.home);
      if (absolute.join(",").length <= MOUNT_OPTIONS_MAX) return [{ type: kind.type, source: kind.source, options: absolute }];
    }
    const relativeOptions = form("");
    const length = relativeOptions.join(",").length;
    if (length > MOUNT_OPTIONS_MAX) {
      throw new Error(`${this.name}: the chain of layer ${id} needs ${length} bytes of mount options, more than a page (${MOUNT_OPTIONS_MAX})`);
    }
    return [{ type: kind.type, source: kind.source, options: relativeOptions, cwd: this.home }];
  }

  /**
   * Docker's GetMetadata of an overlay layer: its `diff` as UpperDir, its `work` (a writable
   * layer's) as WorkDir, and its parents' `diff` folders, nearest first, as LowerDir (from the
   * short links its `lower` file names).
   */
  async metadata(id: string): Promise<Record<string, string>> {
    const dir = await this.complete(id);
    const data: Record<string, string> = {};
    const lower = await readOptional(join(dir, "lower"));
    if (lower) {
      const dirs = await Promise.all(lower.split(":").map(async (l) => resolve(this.home, LINK_DIR, await readlink(join(this.home, l)))));
      data.LowerDir = dirs.join(":");
    }
    data.UpperDir = join(dir, "diff");
    if (existsSync(join(dir, "work"))) data.WorkDir = join(dir, "work");
    return data;
  }

  /**
   * The layer's bytes and inodes. A container's `diff` is live and the container's to change, so
   * it is walked by descriptors, one name at a time, never following a symlink (core/fs/at.ts):
   * a directory swapped for a link to `/` mid-walk is counted as the link, never walked into.
   * Synchronous calls, with a turn of the event loop every few thousand entries.
   */
  async usage(id: string): Promise<LayerUsage> {
    const root = join(this.dir(id), "diff");
    if (!existsSync(root)) throw new Error(`${this.name}: layer ${id} does not exist`);
    const seen = new Set<number>();
    let size = 0;
    let entries = 0;
    const walk = async (dirFd: number): Promise<void> => {
      for (const name of readdirFd(dirFd)) {
        if (++entries % USAGE_ENTRIES_PER_TURN === 0) await nextTurn();
        const st = lstatAt(dirFd, name);
        if (!st) continue; // gone since it was listed
        if (!seen.has(st.ino)) {
          seen.add(st.ino);
          // as Docker's directory size: all but directories, so a symlink counts its target's length
          if (!st.isDirectory()) size += st.size;
        }
        if (!st.isDirectory()) continue;
        const child = tryOpenDirAt(dirFd, name);
        if (child === undefined) continue; // no longer a directory
        try {
          await walk(child);
        } finally {
          closeSync(child);
        }
      }
    };
    const rootFd = openSync(root, DIR_FLAGS);
    try {
      await walk(rootFd);
    } finally {
      closeSync(rootFd);
    }
    return { size, inodes: seen.size };
  }

  async remove(id: string): Promise<void> {
    const dir = this.dir(id);
    if (!existsSync(dir)) return;
    // A writable layer (a container's) is never a parent: no need to read every layer's parent.
    const children = existsSync(join(dir, "work")) ? [] : await this.children(id);
    if (children.length > 0) {
      throw new Error(`${this.name}: cannot remove layer ${id}: layers ${children.join(", ")} use it as their parent`);
    }
    await this.removeDir(id);
  }

  /** Ids of the layers whose parent is `id`. */
  private async children(id: string): Promise<string[]> {
    const out: string[] = [];
    for (const entry of await this.layerIds()) {
      if (entry === id) continue;
      if ((await readOptional(join(this.home, entry, "parent"))) === id) out.push(entry);
    }
    return out;
  }

  /** Removes a layer's link and directory: renamed aside first, so a crash leaves no half layer. */
  private async removeDir(id: string): Promise<void> {
    const dir = join(this.home, id);
    const short = await readOptional(join(dir, "link"));
    await this.releaseLayer(dir);
    const aside = join(this.home, `${REMOVING}${id}-${randomBytes(4).toString("hex")}`);
    try {
      await rename(dir, aside);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
      throw err;
    }
    if (short) await rm(join(this.home, LINK_DIR, short), { force: true });
    await rm(aside, { recursive: true, force: true });
  }

  async cleanup(): Promise<void> {
    const links = new Set<string>();
    for (const entry of await readdir(this.home)) {
      if (entry === LINK_DIR) continue;
      const path = join(this.home, entry);
      if (entry.startsWith(REMOVING)) {
        await rm(path, { recursive: true, force: true });
        continue;
      }
      if (entry.startsWith(".") || !ID_RE.test(entry)) continue;
      if (existsSync(join(path, INCOMPLETE)) || !existsSync(join(path, "diff"))) {
        await this.removeDir(entry);
        continue;
      }
      // A layer whose link went missing gets it back (its children name it by the link).
      const short = await readOptional(join(path, "link"));
      if (short) {
        links.add(short);
        const linkPath = join(this.home, LINK_DIR, short);
        if (!(await lstat(linkPath).catch(() => undefined))) await symlink(`../${entry}/diff`, linkPath);
      }
    }
    // Links to no layer, or to a layer that does not name them.
    for (const short of await readdir(join(this.home, LINK_DIR))) {
      const linkPath = join(this.home, LINK_DIR, short);
      if (!links.has(short) || !existsSync(linkPath)) await rm(linkPath, { force: true, recursive: true });
    }
  }
}
