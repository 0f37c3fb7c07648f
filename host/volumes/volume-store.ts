/**
 * The daemon's record of each volume, beside what its driver keeps: name, driver, labels,
 * options and creation time, one JSON file each under `<data-root>/volumes/_meta/` (a name no
 * volume can have), written atomically and all held in memory. The records are what the
 * daemon lists; they survive a restart as the drivers' data does.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeJsonAtomic } from "../../core/images/atomic-file.js";

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
  private readonly dir: string;

  constructor(volumesRoot: string) {
    this.dir = join(volumesRoot, "_meta");
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
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

  save(rec: VolumeRecord): void {
    writeJsonAtomic(join(this.dir, `${rec.Name}.json`), rec);
    this.byName.set(rec.Name, rec);
  }

  remove(name: string): void {
    rmSync(join(this.dir, `${name}.json`), { force: true });
    this.byName.delete(name);
  }
}
