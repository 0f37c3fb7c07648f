/**
 * The CRI's records (pod sandboxes, containers): one JSON file per object in a folder of
 * `<data-root>/cri/`, written durably, read all at start and held in memory. A record is
 * written once the object is whole and removed last, so a crash leaves either a whole object
 * or leftovers no record names (which the next start clears).
 */
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { removeTempFiles, writeJsonDurably } from "../../core/fs/durable-file.js";
import { PRIVATE_DIR } from "../../core/state-modes.js";

export class CriStore<R extends { id: string }> {
  private readonly records = new Map<string, R>();

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
    removeTempFiles(dir);
    for (const f of readdirSync(dir).filter((n) => /^[a-f0-9]{64}\.json$/.test(n))) {
      try {
        const rec = JSON.parse(readFileSync(join(dir, f), "utf8")) as R;
        this.records.set(rec.id, rec);
      } catch {
        // a record a crash cut short: its object was not whole (the write is atomic, so this is a hand edit)
      }
    }
  }

  list(): R[] {
    return [...this.records.values()];
  }

  get(id: string): R | undefined {
    return this.records.get(id);
  }

  /**
   * The record an id names: the full id, or a prefix of one (crictl shows and takes the first
   * 13 characters); undefined for none or for a prefix that names two.
   */
  find(id: string): R | undefined {
    if (!id) return undefined;
    const exact = this.records.get(id);
    if (exact) return exact;
    const matches = [...this.records.keys()].filter((k) => k.startsWith(id));
    return matches.length === 1 ? this.records.get(matches[0]) : undefined;
  }

  async save(rec: R): Promise<void> {
    this.records.set(rec.id, rec);
    await writeJsonDurably(join(this.dir, `${rec.id}.json`), rec);
  }

  async remove(id: string): Promise<void> {
    this.records.delete(id);
    await rm(join(this.dir, `${id}.json`), { force: true });
  }
}
