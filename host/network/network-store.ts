/**
 * The daemon's networks: one record each at `<data-root>/network/<id>.json` with the network's
 * spec and its address allocations, written atomically off the event loop (several saves of one
 * network in a burst of starts become one or two writes: core/fs/record-writer.ts), kept in
 * memory too, where a save shows at once. A restart finds
 * every network and every address given out, so a container that kept running (live restore)
 * keeps its address and no new container gets it.
 */
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { NetworkSpec } from "../../core/contracts/network.js";
import { jsonText, removeTempFiles } from "../../core/fs/durable-file.js";
import { RecordWriter } from "../../core/fs/record-writer.js";
import { kernelRandomBytes } from "../../core/random-bytes.js";
import type { IpamState } from "../../core/network/ipam.js";
import { PRIVATE_DIR } from "../../core/state-modes.js";

export interface NetworkRecord {
  spec: NetworkSpec;
  /** The address management's state (core/network/ipam.ts). */
  ipam: IpamState;
}

export class NetworkStore {
  private readonly byId = new Map<string, NetworkRecord>();
  private readonly writer = new RecordWriter();

  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
    removeTempFiles(dir);
    for (const f of readdirSync(dir)) {
      if (!/^[a-f0-9]{64}\.json$/.test(f)) continue;
      try {
        const rec = JSON.parse(readFileSync(join(dir, f), "utf8")) as NetworkRecord;
        this.byId.set(rec.spec.id, rec);
      } catch {
        // a torn write cannot happen (atomic); an unreadable file is left for the operator
      }
    }
  }

  newId(): string {
    for (;;) {
      const id = kernelRandomBytes(32).toString("hex");
      if (!this.byId.has(id) && ![...this.byId.keys()].some((k) => k.startsWith(id.slice(0, 12)))) return id;
    }
  }

  list(): NetworkRecord[] {
    return [...this.byId.values()];
  }

  /** By id, unique id prefix, or name (a name wins over a prefix, as in Docker). */
  find(ref: string): NetworkRecord | undefined {
    const exact = this.byId.get(ref);
    if (exact) return exact;
    const named = this.list().find((r) => r.spec.name === ref);
    if (named) return named;
    const prefixed = this.list().filter((r) => r.spec.id.startsWith(ref));
    return ref.length > 0 && prefixed.length === 1 ? prefixed[0] : undefined;
  }

  /** Keeps the record (in memory at once); resolves once it is on disk. */
  save(rec: NetworkRecord): Promise<void> {
    this.byId.set(rec.spec.id, rec);
    return this.writer.write(join(this.dir, `${rec.spec.id}.json`), () => jsonText(rec));
  }

  /** Out of memory at once; its file once a write of it under way has ended. */
  async remove(id: string): Promise<void> {
    this.byId.delete(id);
    const file = join(this.dir, `${id}.json`);
    await this.writer.forget(file);
    await rm(file, { force: true });
  }
}
