/**
 * The local volume driver (core/contracts/volume.ts). Under its home (`<data-root>/volumes`)
 * each volume is a folder `<name>/` holding `_data/` (what containers see) and, when it was
 * created with options, `opts.json`. A volume with `type`/`device` has that filesystem mounted
 * on `_data` while at least one container uses it; the users are counted by container id, in
 * memory: after a daemon restart a mount found in place is taken over (the daemon mounts again
 * for the containers that still run, which counts them).
 *
 * A volume is made whole in a folder of its own (`.creating-<name>-<random>`) and renamed into
 * place: a crash leaves the whole volume or none, and the next start removes what a create left
 * half made, which no name can reach.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { chown, lstat, mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execFileAsync as run } from "../../core/exec-file.js";
import type { VolumeDriver, VolumeInfo } from "../../core/contracts/volume.js";
import { localMountError } from "./mount-error.js";
import { mountOptionsOf, validateLocalOptions } from "./options.js";

const NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]+$/;
/** Volumes being made, renamed to their name once whole. */
const CREATING = ".creating-";

/** `rootOwner`: who new volumes' `_data` folders belong to (the remapped root under `--userns-remap`), else root. */
export function createLocalVolumeDriver(home: string, rootOwner?: { uid: number; gid: number }): VolumeDriver {
  mkdirSync(home, { recursive: true, mode: 0o701 });
  // what creates a crash cut short left (at the driver's making, before any create of its own)
  for (const entry of readdirSync(home)) if (entry.startsWith(CREATING)) rmSync(join(home, entry), { recursive: true, force: true });
  const users = new Map<string, Set<string>>();
  const paths = (name: string) => {
    // The daemon checks names first; this keeps a bad one from ever naming a path outside home.
    if (!NAME.test(name)) throw new Error(`"${name}" includes invalid characters for a local volume name, only "[a-zA-Z0-9][a-zA-Z0-9_.-]" are allowed`);
    const root = join(home, name);
    return { root, data: join(root, "_data"), opts: join(root, "opts.json") };
  };
  const readOptions = async (name: string): Promise<Record<string, string>> => {
    try {
      return JSON.parse(await readFile(paths(name).opts, "utf8")) as Record<string, string>;
    } catch {
      return {};
    }
  };
  const info = async (name: string): Promise<VolumeInfo | undefined> => {
    const p = paths(name);
    let st;
    try {
      st = await stat(p.root);
      if (!(await stat(p.data)).isDirectory()) return undefined;
    } catch {
      return undefined;
    }
    const created = st.birthtimeMs > 0 ? st.birthtime : st.ctime;
    return { name, mountpoint: p.data, createdAt: created.toISOString(), options: await readOptions(name) };
  };

  return {
    name: "local",
    scope: "local",
    capabilities: ["usage"],
    validateOptions: validateLocalOptions,

    async create(name, options) {
      validateLocalOptions(options);
      const p = paths(name);
      if (existsSync(p.root)) throw new Error(`volume ${name} already exists`);
      // (not named after the volume: the longest name is taken too)
      const making = join(home, `${CREATING}${randomBytes(8).toString("hex")}`);
      await mkdir(making, { mode: 0o701 });
      try {
        if (Object.keys(options).length > 0) await writeFile(join(making, "opts.json"), JSON.stringify(options), { mode: 0o600 });
        await mkdir(join(making, "_data"), { mode: 0o755 });
        if (rootOwner) await chown(join(making, "_data"), rootOwner.uid, rootOwner.gid);
        await rename(making, p.root);
      } catch (err) {
        await rm(making, { recursive: true, force: true });
        throw err;
      }
      return (await info(name))!;
    },

    get: info,

    async list() {
      const out: VolumeInfo[] = [];
      for (const entry of await readdir(home)) {
        if (!NAME.test(entry)) continue;
        const v = await info(entry);
        if (v) out.push(v);
      }
      return out;
    },

    async mount(name, containerId) {
      const p = paths(name);
      if (!(await info(name))) throw new Error(`no such volume: ${name}`);
      const holders = users.get(name) ?? new Set<string>();
      const how = mountOptionsOf(await readOptions(name));
      if (how && !(await mountedAt(p.data))) {
        const args = ["-t", how.type || "none"];
        if (how.o) args.push("-o", how.o);
        try {
          await run("mount", [...args, how.device, p.data]);
        } catch (err) {
          throw localMountError(how.device, p.data, how.o, String((err as { stderr?: string }).stderr || (err as Error).message).trim());
        }
      }
      holders.add(containerId);
      users.set(name, holders);
      return p.data;
    },

    async unmount(name, containerId) {
      const holders = users.get(name);
      holders?.delete(containerId);
      if (holders && holders.size > 0) return;
      users.delete(name);
      const p = paths(name);
      if (mountOptionsOf(await readOptions(name))) await unmountPath(p.data);
    },

    async remove(name) {
      const p = paths(name);
      if (!existsSync(p.root)) return;
      users.delete(name);
      await unmountPath(p.data);
      // Never delete through a mount: with o=bind that would be the host's own folder.
      if (await mountedAt(p.data)) throw new Error(`cannot remove volume ${name}: ${p.data} is still mounted`);
      await rm(p.root, { recursive: true, force: true });
    },

    async usage(name) {
      return treeSize(paths(name).data);
    },

    async status() {
      const names = (await readdir(home)).filter((n) => NAME.test(n));
      return [["Volumes", String(names.length)]];
    },
  };
}

/**
 * Bytes under `dir` as Docker counts a volume's (its directory size): everything but directories,
 * so a symlink counts its target's length, each inode once.
 */
async function treeSize(dir: string): Promise<number> {
  const seen = new Set<string>();
  let total = 0;
  const walk = async (path: string, depth: number): Promise<void> => {
    if (depth > 256) return;
    const st = await lstat(path).catch(() => undefined);
    if (!st) return;
    if (!st.isDirectory()) {
      const key = `${st.dev}:${st.ino}`;
      if (!seen.has(key)) {
        seen.add(key);
        total += st.size;
      }
      return;
    }
    if (!st.isDirectory()) return;
    for (const entry of await readdir(path).catch(() => [] as string[])) await walk(join(path, entry), depth + 1);
  };
  await walk(dir, 0);
  return total;
}

async function unmountPath(target: string): Promise<void> {
  for (let i = 0; i < 4 && (await mountedAt(target)); i++) {
    await run("umount", [target]).catch(() => run("umount", ["-l", target]).catch(() => {}));
  }
}

/** Whether something is mounted at `target` (mountinfo's field 5, octal escapes as the kernel writes them). */
async function mountedAt(target: string): Promise<boolean> {
  let text: string;
  try {
    text = await readFile("/proc/self/mountinfo", "utf8");
  } catch {
    return false;
  }
  const escaped = target.replace(/[ \t\n\\]/g, (ch) => `\\${ch.charCodeAt(0).toString(8).padStart(3, "0")}`);
  return text.split("\n").some((line) => line.split(" ")[4] === escaped);
}
