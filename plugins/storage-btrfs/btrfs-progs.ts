/**
 * The btrfs operations the driver needs, through the `btrfs` command of btrfs-progs (Debian
 * package `btrfs-progs`): subvolumes (create, snapshot, delete with the subvolumes nested in
 * them) and quota groups (enable, limit). Each failure is an error that names the command and
 * carries btrfs's own words.
 */
import { execFileAsync as run } from "../../core/exec-file.js";

/** A btrfs command that failed; `detail` is what btrfs printed (its `ERROR: ` prefix removed). */
class BtrfsCommandError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly detail: string,
  ) {
    super(`btrfs ${args.slice(0, 2).join(" ")} failed: ${detail}`);
    this.name = "BtrfsCommandError";
  }
}

/** Runs `btrfs <args>`; resolves with its standard output. */
export async function btrfs(args: readonly string[]): Promise<string> {
  try {
    const { stdout } = await run("btrfs", args as string[], { maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === "ENOENT") throw new BtrfsCommandError(args, "the btrfs command is missing (install btrfs-progs)");
    const detail = (e.stderr ?? "").split("\n").map((l) => l.replace(/^ERROR: /, "").trim()).filter(Boolean).join("; ");
    throw new BtrfsCommandError(args, detail || e.message);
  }
}

/** `btrfs-progs v6.2`, from `btrfs --version`. */
export async function progsVersion(): Promise<string> {
  return (await btrfs(["--version"])).trim().split("\n")[0];
}

export async function createSubvolume(path: string): Promise<void> {
  await btrfs(["subvolume", "create", path]);
}

/** A writable snapshot of the subvolume `source` at `path` (even of a read-only one). */
export async function snapshotSubvolume(source: string, path: string): Promise<void> {
  await btrfs(["subvolume", "snapshot", source, path]);
}

/** The id of the subvolume that holds `path`. */
async function subvolumeId(path: string): Promise<number> {
  return Number((await btrfs(["inspect-internal", "rootid", path])).trim());
}

/** Every subvolume of the filesystem that holds `path`: its id and the id of the one it is in. */
async function listSubvolumes(path: string): Promise<{ id: number; parent: number }[]> {
  const out: { id: number; parent: number }[] = [];
  for (const line of (await btrfs(["subvolume", "list", path])).split("\n")) {
    const m = /^ID (\d+) gen \d+ top level (\d+) /.exec(line);
    if (m) out.push({ id: Number(m[1]), parent: Number(m[2]) });
  }
  return out;
}

/**
 * Deletes the subvolume at `path` and every subvolume made inside it (a container may make its
 * own), the deepest first: btrfs refuses to delete a subvolume that still holds another.
 */
export async function deleteSubvolumeTree(path: string): Promise<void> {
  try {
    await btrfs(["subvolume", "delete", path]);
    return;
  } catch (err) {
    if (!(err instanceof BtrfsCommandError) || !/not empty/i.test(err.detail)) throw err;
  }
  const top = await subvolumeId(path);
  const children = new Map<number, number[]>();
  for (const { id, parent } of await listSubvolumes(path)) children.set(parent, [...(children.get(parent) ?? []), id]);
  const deepestFirst: number[] = [];
  const visit = (id: number) => {
    for (const child of children.get(id) ?? []) visit(child);
    deepestFirst.push(id);
  };
  for (const child of children.get(top) ?? []) visit(child);
  // By id: a nested subvolume's path may have been renamed or moved by the container.
  for (const id of deepestFirst) await btrfs(["subvolume", "delete", "--subvolid", String(id), path]);
  await btrfs(["subvolume", "delete", path]);
}

/** Whether quota groups are on for the filesystem that holds `path`. */
export async function quotaEnabled(path: string): Promise<boolean> {
  try {
    await btrfs(["qgroup", "show", "--raw", path]);
    return true;
  } catch (err) {
    if (err instanceof BtrfsCommandError && /quotas not enabled/i.test(err.detail)) return false;
    throw err;
  }
}

/** Turns quota groups on, and waits for the scan that counts what is already there. */
export async function enableQuota(path: string): Promise<void> {
  await btrfs(["quota", "enable", path]);
  await btrfs(["quota", "rescan", "-w", path]);
}

/** Limits what the subvolume at `path` refers to (its files, shared with its snapshot parent or not) to `bytes`. */
export async function limitSubvolume(path: string, bytes: number): Promise<void> {
  await btrfs(["qgroup", "limit", String(bytes), path]);
}

/** Removes the quota groups of deleted subvolumes (kernels before 6.10 keep them). */
export async function clearStaleQgroups(path: string): Promise<void> {
  await btrfs(["qgroup", "clear-stale", path]);
}
