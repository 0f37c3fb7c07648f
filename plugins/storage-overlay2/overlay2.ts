/**
 * The overlay2 storage driver: every layer is a directory of its own files (`diff`), and a
 * chain is seen through an overlay mount that stacks the diffs of the layer and its ancestors.
 *
 * Layout under `home` (`<data-root>/overlay2`):
 *   <id>/diff         the layer's own files; overlay whiteouts (0:0 character devices,
 *                     `trusted.overlay.opaque=y`) stand for deletions
 *   <id>/link         the layer's short name: 26 characters of base32
 *   <id>/lower        the short names of its ancestors, nearest first: `l/A:l/B:...` (absent
 *                     for a base layer)
 *   <id>/parent       the parent's id (absent for a base layer)
 *   <id>/work         overlay's work directory; only writable layers have one, and its
 *                     presence is what makes a layer writable
 *   <id>/quota        `{"project": n, "bytes": n}`: the xfs project quota of a writable layer
 *   <id>/.incomplete  present while `create` or `applyDiff` runs; `cleanup()` removes layers
 *                     that still carry it
 *   l/<short>         a symlink to `../<id>/diff`, so that mount options name layers by their
 *                     short names and deep chains fit in a page of mount options
 *   .removing-*       a layer being removed (renamed first, then deleted); `cleanup()` finishes it
 *
 * Mount specifications: absolute paths (`lowerdir=<home>/l/A:...`) when the options fit in a
 * page (4095 bytes); otherwise paths relative to `home` (`lowerdir=l/A:...,upperdir=<id>/diff`)
 * and the specification's `cwd` says where the mount must be made from (mount(8) run in that
 * directory, or chdir before mount(2)).
 */
import { execFile } from "node:child_process";
import { randomBytes, randomInt } from "node:crypto";
import { existsSync } from "node:fs";
import { lstat, mkdir, readdir, readFile, realpath, rename, rm, statfs, symlink, unlink, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import type { Readable } from "node:stream";
import { promisify } from "node:util";
import type { CreateOptions, LayerUsage, MountSpec, StorageCapability, StorageContext, StorageDriver } from "../../core/contracts/storage.js";
import { mountOf as mountOfPath, readMountinfo } from "../../core/mountinfo.js";
import { showBytes } from "../../core/options/value-types-structured.js";
import { layerSizeOption, parseStorageSize } from "../../core/storage-options.js";

/** The tar code (tar-stream, the xattr binding) is loaded on first use, not at daemon start. */
const archive = () => import("../../core/archive/index.js");

const run = promisify(execFile);

/** A mount specification; `cwd`, when set, is the directory relative paths in `options` start from. */
export interface Overlay2MountSpec extends MountSpec {
  cwd?: string;
}

/** The kernel copies one page of mount options; 4096 minus the closing NUL. */
export const MOUNT_OPTIONS_MAX = 4095;
/** The most ancestors a layer may have: its chain must still fit in a page of mount options. */
export const MAX_DEPTH = 125;

const LINK_DIR = "l";
const INCOMPLETE = ".incomplete";
const REMOVING = ".removing-";
const ID_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** statfs f_type values, named as `/info` names them (Docker's names). */
const FS_NAMES: Record<number, string> = {
  0xef53: "extfs",
  0x58465342: "xfs",
  0x9123683e: "btrfs",
  0x01021994: "tmpfs",
  0x794c7630: "overlayfs",
  0x2fc12fc1: "zfs",
  0x6969: "nfs",
  0xf2f52010: "f2fs",
  0x65735546: "fuse",
  0x73717368: "squashfs",
  0x61756673: "aufs",
  0xf15f: "ecryptfs",
  0x858458f6: "ramfs",
};

/** Backing filesystems overlay cannot keep an upper directory on. */
const UNSUITABLE = new Set(["overlayfs", "aufs", "ecryptfs", "zfs"]);

export async function createOverlay2Driver(ctx: StorageContext): Promise<StorageDriver> {
  const driver = new Overlay2Driver(ctx);
  await driver.init();
  return driver;
}

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

/** The mount of `/proc/self/mountinfo` that holds `path` (the last, longest match). */
export function mountOf(path: string, mountinfo = readMountinfo()): { mountPoint: string; fsType: string; superOptions: string[] } | undefined {
  const m = mountOfPath(path, mountinfo);
  return m && { mountPoint: m.mountPoint, fsType: m.fsType, superOptions: m.superOptions };
}

/** `path`, or its nearest ancestor that exists. */
async function existingAncestor(path: string): Promise<string> {
  for (let p = path; ; p = dirname(p)) {
    try {
      await lstat(p);
      return p;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT" || dirname(p) === p) throw err;
    }
  }
}

interface QuotaSetup {
  /** The xfs mount point that holds `home`, for xfs_quota. */
  mountPoint: string;
  /** Default size of writable layers (`overlay2.size`), bytes. */
  defaultBytes?: number;
}

export class Overlay2Driver implements StorageDriver {
  readonly name = "overlay2";
  // parallel-apply: a layer's diff goes into its own `diff` folder and nowhere else
  capabilities: readonly StorageCapability[] = ["native-diff", "parallel-apply"];
  readonly home: string;
  private backingFs = "unknown";
  private quota?: QuotaSetup;
  /** Mount options every overlay mount carries: features turned off that native diffs cannot show. */
  private extraOptions: string[] = [];

  constructor(private readonly ctx: StorageContext) {
    this.home = resolve(ctx.home);
  }

  /** Validates the options, makes the folders and finds what the backing filesystem can do. */
  async init(): Promise<void> {
    for (const key of Object.keys(this.ctx.options)) {
      if (key !== "overlay2.size") throw new Error(`overlay2: unknown option ${key}`);
    }
    // Judged where home is (or will be): a driver that refuses to start leaves no folder behind.
    const probe = await existingAncestor(this.home);
    const st = await statfs(probe);
    this.backingFs = FS_NAMES[Number(st.type)] ?? `unknown (0x${Number(st.type).toString(16)})`;
    if (UNSUITABLE.has(this.backingFs)) {
      throw new Error(`overlay2: ${this.home} is on ${this.backingFs}, which overlay cannot use for its upper directories`);
    }
    // Only what the kernel knows may be turned off explicitly (an unknown option fails the mount).
    for (const [param, option] of [["index", "index=off"], ["redirect_dir", "redirect_dir=off"], ["metacopy", "metacopy=off"]]) {
      if (existsSync(`/sys/module/overlay/parameters/${param}`)) this.extraOptions.push(option);
    }

    const quotaMount = await this.quotaMount(probe);
    const size = this.ctx.options["overlay2.size"];
    if (size !== undefined) {
      if (typeof quotaMount === "string") {
        throw new Error(`overlay2.size is only supported on xfs mounted with the pquota option; ${this.home} is on ${quotaMount}`);
      }
      const bytes = parseStorageSize("overlay2", "overlay2.size", size);
      const fsBytes = Number(st.blocks) * Number(st.bsize);
      if (bytes >= fsBytes) {
        throw new Error(`overlay2: overlay2.size ${size} is not below the size of the backing filesystem (${showBytes(fsBytes)})`);
      }
      this.quota = { mountPoint: quotaMount.mountPoint, defaultBytes: bytes };
    } else if (typeof quotaMount !== "string") {
      this.quota = { mountPoint: quotaMount.mountPoint };
    }
    if (this.quota) this.capabilities = [...this.capabilities, "quota"];
    await mkdir(join(this.home, LINK_DIR), { recursive: true, mode: 0o700 });
  }

  /** The xfs mount with enforced project quota that holds home, or why there is none. */
  private async quotaMount(probe: string): Promise<{ mountPoint: string } | string> {
    if (this.backingFs !== "xfs") return this.backingFs;
    const mount = mountOf(await realpath(probe));
    if (!mount || mount.fsType !== "xfs") return this.backingFs;
    if (!mount.superOptions.some((o) => o === "prjquota" || o === "pquota")) return "xfs without pquota";
    try {
      const { stdout } = await run("xfs_quota", ["-x", "-c", "state -p", mount.mountPoint]);
      if (!/Enforcement:\s*ON/i.test(stdout)) return "xfs without project quota enforcement";
      await run("xfs_io", ["-V"]);
    } catch {
      return "xfs, but xfs_quota or xfs_io (package xfsprogs) is missing";
    }
    return { mountPoint: mount.mountPoint };
  }

  async status(): Promise<[string, string][]> {
    return [
      ["Backing Filesystem", this.backingFs],
      ["Supports d_type", "true"],
      ["Using metacopy", "false"],
      ["Native Overlay Diff", "true"],
      ["userxattr", "false"],
    ];
  }

  // --- paths -------------------------------------------------------------------------------------

  private dir(id: string): string {
    if (!ID_RE.test(id) || id === LINK_DIR) throw new Error(`overlay2: invalid layer id ${JSON.stringify(id)}`);
    return join(this.home, id);
  }

  private async readOptional(path: string): Promise<string | undefined> {
    try {
      return (await readFile(path, "utf8")).trim();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw err;
    }
  }

  /** Throws unless `id` is a whole layer (exists, not half made). */
  private async complete(id: string): Promise<string> {
    const dir = this.dir(id);
    if (!existsSync(join(dir, "diff"))) throw new Error(`overlay2: layer ${id} does not exist`);
    if (existsSync(join(dir, INCOMPLETE))) throw new Error(`overlay2: layer ${id} is incomplete`);
    return dir;
  }

  // --- layers ------------------------------------------------------------------------------------

  async exists(id: string): Promise<boolean> {
    return existsSync(this.dir(id));
  }

  async parent(id: string): Promise<string | undefined> {
    const dir = this.dir(id);
    if (!existsSync(dir)) throw new Error(`overlay2: layer ${id} does not exist`);
    return (await this.readOptional(join(dir, "parent"))) || undefined;
  }

  async create(id: string, parent: string | undefined, opts: CreateOptions = {}): Promise<void> {
    const dir = this.dir(id);
    let lower = "";
    if (parent !== undefined) {
      const parentDir = this.dir(parent);
      if (!existsSync(join(parentDir, "diff")) || existsSync(join(parentDir, INCOMPLETE))) {
        throw new Error(`overlay2: cannot create layer ${id}: parent layer ${parent} does not exist`);
      }
      const parentLink = await readFile(join(parentDir, "link"), "utf8");
      const parentLower = await this.readOptional(join(parentDir, "lower"));
      lower = parentLower ? `${LINK_DIR}/${parentLink.trim()}:${parentLower}` : `${LINK_DIR}/${parentLink.trim()}`;
      if (lower.split(":").length > MAX_DEPTH) {
        throw new Error(`overlay2: cannot create layer ${id}: more than ${MAX_DEPTH} layers in its chain`);
      }
    }
    const quotaBytes = this.layerQuota(id, opts);

    try {
      await mkdir(dir, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") throw new Error(`overlay2: layer ${id} already exists`);
      throw err;
    }
    let short: string | undefined;
    try {
      await writeFile(join(dir, INCOMPLETE), "");
      await mkdir(join(dir, "diff"), { mode: 0o755 });
      short = await this.makeLink(id);
      await writeFile(join(dir, "link"), short);
      if (parent !== undefined) {
        await writeFile(join(dir, "lower"), lower);
        await writeFile(join(dir, "parent"), parent);
      }
      if (opts.writable) {
        await mkdir(join(dir, "work"), { mode: 0o700 });
        if (quotaBytes !== undefined) await this.setQuota(dir, quotaBytes);
      }
      await unlink(join(dir, INCOMPLETE));
    } catch (err) {
      if (short) await rm(join(this.home, LINK_DIR, short), { force: true }).catch(() => {});
      await this.removeDir(id).catch(() => {});
      throw err;
    }
  }

  /** The quota a new layer gets, in bytes, or undefined; throws for options it cannot honour. */
  private layerQuota(id: string, opts: CreateOptions): number | undefined {
    const size = layerSizeOption("overlay2", opts);
    if (size !== undefined) {
      if (!opts.writable) throw new Error(`overlay2: the size option applies to writable layers only (layer ${id})`);
      if (!this.quota) {
        throw new Error(`overlay2: the size option is only supported on xfs mounted with the pquota option; ${this.home} is on ${this.backingFs}`);
      }
      return parseStorageSize("overlay2", "size", size);
    }
    return opts.writable ? this.quota?.defaultBytes : undefined;
  }

  /** Gives the layer's diff a project of its own (inherited by what is made in it) and limits it. */
  private async setQuota(dir: string, bytes: number): Promise<void> {
    const project = await this.allocateProject();
    const diff = join(dir, "diff");
    await writeFile(join(dir, "quota"), JSON.stringify({ project, bytes }));
    await run("xfs_io", ["-c", `chproj ${project}`, "-c", "chattr +P", diff]);
    const kib = Math.max(1, Math.ceil(bytes / 1024));
    await run("xfs_quota", ["-x", "-c", `limit -p bhard=${kib}k ${project}`, this.quota!.mountPoint]);
  }

  /**
   * A project id no layer of this driver uses. Ids are drawn at random from a large range so
   * that two data roots on one xfs filesystem (each with its own driver) do not meet.
   */
  private async allocateProject(): Promise<number> {
    const used = new Set<number>();
    for (const entry of await readdir(this.home)) {
      if (entry === LINK_DIR || entry.startsWith(".")) continue;
      const text = await this.readOptional(join(this.home, entry, "quota"));
      if (text) used.add((JSON.parse(text) as { project: number }).project);
    }
    for (;;) {
      const project = randomInt(1 << 20, 2 ** 31 - 1);
      if (!used.has(project)) return project;
    }
  }

  private async clearQuota(dir: string): Promise<void> {
    if (!this.quota) return;
    const text = await this.readOptional(join(dir, "quota"));
    if (!text) return;
    const { project } = JSON.parse(text) as { project: number };
    await run("xfs_quota", ["-x", "-c", `limit -p bhard=0 bsoft=0 ${project}`, this.quota.mountPoint]).catch(() => {});
  }

  /** Makes `l/<short>` -> `../<id>/diff` with a fresh short name. */
  private async makeLink(id: string): Promise<string> {
    for (;;) {
      const short = shortId();
      try {
        await symlink(`../${id}/diff`, join(this.home, LINK_DIR, short));
        return short;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
    }
  }

  async applyDiff(id: string, tar: Readable): Promise<number> {
    const dir = await this.complete(id);
    await writeFile(join(dir, INCOMPLETE), "");
    // Device nodes are let through as Docker does for root: the devices cgroup guards their use.
    const { applyLayer } = await archive();
    await applyLayer(tar, join(dir, "diff"), { whiteouts: "overlay", allowDevices: true });
    await unlink(join(dir, INCOMPLETE));
    return (await this.usage(id)).size;
  }

  async mounts(id: string): Promise<Overlay2MountSpec[]> {
    const dir = await this.complete(id);
    const writable = existsSync(join(dir, "work"));
    const link = `${LINK_DIR}/${(await readFile(join(dir, "link"), "utf8")).trim()}`;
    const lower = await this.readOptional(join(dir, "lower"));
    if (!lower) {
      // A base layer: nothing to stack. overlay needs a lower directory, so bind its diff.
      return [{ type: "bind", source: join(dir, "diff"), options: writable ? ["bind"] : ["bind", "ro"] }];
    }
    const lowers = writable ? lower.split(":") : [link, ...lower.split(":")];
    const form = (base: string) => {
      const at = (p: string) => (base ? `${base}/${p}` : p);
      const options = [...this.extraOptions, `lowerdir=${lowers.map(at).join(":")}`];
      if (writable) options.push(`upperdir=${at(`${id}/diff`)}`, `workdir=${at(`${id}/work`)}`);
      return options;
    };
    // Absolute paths when they fit (and the home's path says nothing overlay would misread).
    if (!/[,:\\]/.test(this.home)) {
      const absolute = form(this.home);
      if (absolute.join(",").length <= MOUNT_OPTIONS_MAX) return [{ type: "overlay", source: "overlay", options: absolute }];
    }
    const relativeOptions = form("");
    const length = relativeOptions.join(",").length;
    if (length > MOUNT_OPTIONS_MAX) {
      throw new Error(`overlay2: the chain of layer ${id} needs ${length} bytes of mount options, more than a page (${MOUNT_OPTIONS_MAX})`);
    }
    return [{ type: "overlay", source: "overlay", options: relativeOptions, cwd: this.home }];
  }

  async diff(id: string): Promise<Readable> {
    const dir = await this.complete(id);
    const { packLayer } = await archive();
    return packLayer(join(dir, "diff"), { whiteouts: "overlay" });
  }

  async usage(id: string): Promise<LayerUsage> {
    const root = join(this.dir(id), "diff");
    if (!existsSync(root)) throw new Error(`overlay2: layer ${id} does not exist`);
    const seen = new Set<bigint>();
    let size = 0;
    const walk = async (path: string): Promise<void> => {
      for (const entry of await readdir(path, { withFileTypes: true })) {
        const child = join(path, entry.name);
        const st = await lstat(child, { bigint: true });
        if (!seen.has(st.ino)) {
          seen.add(st.ino);
          if (st.isFile()) size += Number(st.size);
        }
        if (st.isDirectory()) await walk(child);
      }
    };
    await walk(root);
    return { size, inodes: seen.size };
  }

  async remove(id: string): Promise<void> {
    const dir = this.dir(id);
    if (!existsSync(dir)) return;
    // A writable layer (a container's) is never a parent: no need to read every layer's parent.
    const children = existsSync(join(dir, "work")) ? [] : await this.children(id);
    if (children.length > 0) {
      throw new Error(`overlay2: cannot remove layer ${id}: layers ${children.join(", ")} use it as their parent`);
    }
    await this.removeDir(id);
  }

  /** Ids of the layers whose parent is `id`. */
  private async children(id: string): Promise<string[]> {
    const out: string[] = [];
    for (const entry of await readdir(this.home)) {
      if (entry === LINK_DIR || entry.startsWith(".") || entry === id) continue;
      if ((await this.readOptional(join(this.home, entry, "parent"))) === id) out.push(entry);
    }
    return out;
  }

  /** Removes a layer's link and directory: renamed aside first, so a crash leaves no half layer. */
  private async removeDir(id: string): Promise<void> {
    const dir = join(this.home, id);
    const short = await this.readOptional(join(dir, "link"));
    await this.clearQuota(dir);
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
      const short = await this.readOptional(join(path, "link"));
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
