/**
 * Managed plugins on disk, under `<data-root>/plugins` (private to root):
 *
 *   <id>/plugin.json   the plugin as the API shows it (plugin-object.ts) and its layers' digests
 *   <id>/rootfs/       its root filesystem
 *   tmp/               plugins being made, and being removed
 *
 * No kill leaves half a plugin: a plugin is made whole in `tmp/<random>/` (rootfs, then its
 * record written durably) and renamed to `<id>` in one step; a removal renames `<id>` into
 * `tmp/` in one step before anything in it goes. The next start empties `tmp/`. A change of
 * settings or state rewrites `plugin.json` atomically (core/fs/durable-file.ts).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
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
  /** Digests of the root filesystem's layers (`sha256:...`), as the configuration's rootfs lists them. */
  layers: string[];
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
