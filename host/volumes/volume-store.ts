/**
 * The daemon's record of each volume, beside what its driver keeps: name, driver, labels,
 * options and creation time, one JSON file each under `<data-root>/volumes/_meta/` (a name no
 * volume can have), written atomically off the event loop (core/fs/record-writer.ts) and all
 * held in memory, where a save shows at once. The records are what the
 * daemon lists; they survive a restart as the drivers' data does.
 */
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { jsonText, removeTempFiles } from "../../core/fs/durable-file.js";
import { RecordWriter } from "../../core/fs/record-writer.js";

export interface VolumeRecord {
  Name: string;
  Driver: string;
  /** RFC 3339, seconds. */
  CreatedAt: string;
  Labels: Record<string, string> | null;
  Options: Record<string, string> | null;
  /** The host path the driver showed at create (`Mountpoint`). */
  Mountpoint: string;
}

export const ANONYMOUS_LABEL = "com.docker.volume.anonymous";

export function isAnonymous(v: VolumeRecord): boolean {
  return v.Labels !== null && ANONYMOUS_LABEL in v.Labels;
}

export class VolumeStore {
  private readonly byName = new Map<string, VolumeRecord>();
  private readonly writer = new RecordWriter();
  private readonly dir: string;

  constructor(volumesRoot: string) {
    this.dir = join(volumesRoot, "_meta");
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    removeTempFiles(this.dir);
    for (const file of readdirSync(this.dir)) {
      if (!file.endsWith(".json")) continue;
      try {
        const rec = JSON.parse(readFileSync(join(this.dir, file), "utf8")) as VolumeRecord;
        this.byName.set(rec.Name, rec);
      } catch {
        // a half-written record cannot be: writes are atomic; anything else unreadable is not ours
      }
    }
  }

  get(name: string): VolumeRecord | undefined {
    return this.byName.get(name);
  }

  list(): VolumeRecord[] {
    return [...this.byName.values()];
  }

  /** Keeps the record (in memory at once); resolves once it is on disk. */
  save(rec: VolumeRecord): Promise<void> {
    this.byName.set(rec.Name, rec);
    return this.writer.write(join(this.dir, `${rec.Name}.json`), () => jsonText(rec));
  }

  /** Out of memory at once; its file once a write of it under way has ended. */
  async remove(name: string): Promise<void> {
    this.byName.delete(name);
    const file = join(this.dir, `${name}.json`);
    await this.writer.forget(file);
    await rm(file, { force: true });
  }
}
