/**
 * The daemon's networks: one record each at `<data-root>/network/<id>.json` with the network's
 * spec and its address allocations, written atomically, kept in memory too. A restart finds
 * every network and every address given out, so a container that kept running (live restore)
 * keeps its address and no new container gets it.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { NetworkSpec } from "../../core/contracts/network.js";
import { writeJsonAtomic } from "../../core/images/atomic-file.js";
import type { IpamState } from "../../core/network/ipam.js";
import { PRIVATE_DIR } from "../../core/state-modes.js";

export interface NetworkRecord {
  spec: NetworkSpec;
  /** The address management's state (core/network/ipam.ts). */
  ipam: IpamState;
}

export class NetworkStore {
  private readonly byId = new Map<string, NetworkRecord>();

  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
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
      const id = randomBytes(32).toString("hex");
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

  save(rec: NetworkRecord): void {
    writeJsonAtomic(join(this.dir, `${rec.spec.id}.json`), rec);
    this.byId.set(rec.spec.id, rec);
  }

  remove(id: string): void {
    rmSync(join(this.dir, `${id}.json`), { force: true });
    this.byId.delete(id);
  }
}
