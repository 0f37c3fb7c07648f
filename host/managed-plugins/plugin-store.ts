/**
 * Managed plugins on disk, under `<data-root>/plugins` (private to root):
 *
 *   <id>/plugin.json   the plugin as the API shows it (plugin-object.ts) and its layers' digests
 *   <id>/rootfs/       its root filesystem
 *   <id>/blobs/<hex>   its layers and configuration as a registry has them (push, pull)
 *   tmp/               plugins being made, removed, or replaced by an upgrade
 *
 * No kill leaves half a plugin: a plugin is made whole in `tmp/<random>/` (rootfs, then its
 * record written durably) and renamed to `<id>` in one step; a removal renames `<id>` into
 * `tmp/` in one step before anything in it goes. The next start empties `tmp/`. A change of
 * settings or state rewrites `plugin.json` atomically (core/fs/durable-file.ts).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { errors } from "../../core/errors.js";
import { syncDir, writeJsonDurably } from "../../core/fs/durable-file.js";
import { killPoint } from "../../core/kill-points.js";
import { readMountinfo, parseMountinfo } from "../../core/mountinfo.js";
import { kernelRandomBytes } from "../../core/random-bytes.js";
import { unmountAll } from "../storage/mount-specs.js";
import type { Plugin } from "./plugin-object.js";

export interface PluginRecord {
  plugin: Plugin;
  /** Digests of the root filesystem's layers (`sha256:...`), kept in `blobs/`. */
  layers: string[];
  /** Digest of the configuration's blob as pushed (in `blobs/`): a push sends it, not the settings since. */
  config: string;
}

const ID = /^[a-f0-9]{64}$/;
const RECORD = "plugin.json";

export class PluginStore {
  private readonly records = new Map<string, PluginRecord>();

  private constructor(readonly root: string) {}

  /** Opens the store: what a crash left in `tmp/` goes, every whole plugin is read. */
  static async open(root: string): Promise<PluginStore> {
    mkdirSync(root, { recursive: true, mode: 0o700 });
    const store = new PluginStore(root);
    await unmountUnder(store.tmp);
    // an upgrade cut between its two renames: the old plugin goes back in place
    for (const name of existsSync(store.tmp) ? readdirSync(store.tmp) : []) {
      const id = /^replaced-([a-f0-9]{64})$/.exec(name)?.[1];
      if (id && !existsSync(join(root, id))) renameSync(join(store.tmp, name), join(root, id));
    }
    rmSync(store.tmp, { recursive: true, force: true });
    mkdirSync(store.tmp, { mode: 0o700 });
    for (const id of readdirSync(root)) {
      if (!ID.test(id)) continue;
      const file = join(root, id, RECORD);
      if (!existsSync(file)) continue;
      try {
        store.records.set(id, JSON.parse(readFileSync(file, "utf8")) as PluginRecord);
      } catch (err) {
        throw errors.managedPluginStore(id, `its record ${file} cannot be read: ${(err as Error).message}`);
      }
    }
    return store;
  }

  private get tmp(): string {
    return join(this.root, "tmp");
  }

  dir(id: string): string {
    return join(this.root, id);
  }

  rootfs(id: string): string {
    return join(this.root, id, "rootfs");
  }

  list(): PluginRecord[] {
    return [...this.records.values()];
  }

  get(id: string): PluginRecord | undefined {
    return this.records.get(id);
  }

  /** A new folder in `tmp/` to make a plugin in (the caller fills `<stage>/rootfs`). */
  async stage(): Promise<string> {
    const stage = join(this.tmp, kernelRandomBytes(8).toString("hex"));
    await mkdir(stage, { mode: 0o700 });
    return stage;
  }

  /** Drops a stage that will not become a plugin. */
  async discard(stage: string): Promise<void> {
    await unmountUnder(stage);
    await rm(stage, { recursive: true, force: true });
  }

  /** Makes the staged plugin one of the store's: its record written, then the folder renamed into place. */
  async commit(stage: string, record: PluginRecord): Promise<void> {
    await writeJsonDurably(join(stage, RECORD), record);
    killPoint("plugin-create.staged");
    await rename(stage, this.dir(record.plugin.Id));
    await syncDir(this.root);
    this.records.set(record.plugin.Id, record);
  }

  /**
   * Puts the staged plugin in place of the stored one of the same id (an upgrade): whole old or
   * whole new at any kill (the old one, set aside in `tmp/`, is put back at the next start if
   * the new one is not in place yet).
   */
  async replace(stage: string, record: PluginRecord): Promise<void> {
    const dir = this.dir(record.plugin.Id);
    await writeJsonDurably(join(stage, RECORD), record);
    const aside = join(this.tmp, `replaced-${record.plugin.Id}`);
    await unmountUnder(dir);
    await rename(dir, aside);
    killPoint("plugin-upgrade.set-aside");
    await rename(stage, dir);
    await syncDir(this.root);
    this.records.set(record.plugin.Id, record);
    await rm(aside, { recursive: true, force: true });
  }

  /** Saves a plugin's new settings or state. */
  async save(record: PluginRecord): Promise<void> {
    await writeJsonDurably(join(this.dir(record.plugin.Id), RECORD), record);
    this.records.set(record.plugin.Id, record);
  }

  /** Removes a plugin: gone from the store at its rename, then its files go. */
  async remove(id: string): Promise<void> {
    const dir = this.dir(id);
    await unmountUnder(dir);
    const doomed = join(this.tmp, `removing-${id}`);
    if (statSync(dir, { throwIfNoEntry: false })) {
      await rename(dir, doomed);
      await syncDir(this.root);
    }
    this.records.delete(id);
    killPoint("plugin-remove.renamed");
    await rm(doomed, { recursive: true, force: true });
  }
}

/** Unmounts every mount at or under `dir`, deepest first (a propagated mount a plugin left). */
export async function unmountUnder(dir: string): Promise<void> {
  const mounts = parseMountinfo(readMountinfo())
    .map((m) => m.mountPoint)
    .filter((p) => p === dir || p.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
  for (const m of new Set(mounts)) await unmountAll(m);
}
