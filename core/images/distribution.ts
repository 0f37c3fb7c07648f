/**
 * Where a layer's compressed form lives: for each diff ID, the blobs (digest, size, media
 * type) that registries hold for it, and in which repository. A pull records what it
 * downloaded; a push reads it to skip uploads (the registry has the blob already) or to mount
 * the blob from another repository of the same registry, and records what it uploaded.
 * `distribution/<diff hex>.json` under the image root, written atomically off the event loop;
 * losing it costs only uploads.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { jsonText, removeTempFiles } from "../fs/durable-file.js";
import { RecordWriter } from "../fs/record-writer.js";
import { PRIVATE_DIR } from "../state-modes.js";

export interface BlobLocation {
  digest: string;
  size: number;
  mediaType: string;
  /** `127.0.0.1:5000`, `docker.io`. */
  registry: string;
  /** `library/busybox`. */
  repository: string;
}

const MAX_ENTRIES = 32;

export class DistributionMetadata {
  private readonly dir: string;
  private readonly writer = new RecordWriter();
  /** Lists added but perhaps not on disk yet: what reads (and the next add) see meanwhile. */
  private readonly unwritten = new Map<string, BlobLocation[]>();

  constructor(root: string) {
    this.dir = join(root, "distribution");
    mkdirSync(this.dir, { recursive: true, mode: PRIVATE_DIR });
    removeTempFiles(this.dir);
  }

  private file(diffId: string): string {
    return join(this.dir, `${diffId.replace(/^sha256:/, "")}.json`);
  }

  locations(diffId: string): BlobLocation[] {
    const unwritten = this.unwritten.get(diffId);
    if (unwritten) return unwritten;
    try {
      return JSON.parse(readFileSync(this.file(diffId), "utf8")) as BlobLocation[];
    } catch {
      return [];
    }
  }

  /** Records a location (first in its list); resolves once it is on disk, or could not be (never rejects: it is a hint). */
  add(diffId: string, location: BlobLocation): Promise<void> {
    const same = (l: BlobLocation) => l.digest === location.digest && l.registry === location.registry && l.repository === location.repository;
    const list = [location, ...this.locations(diffId).filter((l) => !same(l))].slice(0, MAX_ENTRIES);
    this.unwritten.set(diffId, list);
    const settled = () => {
      if (this.unwritten.get(diffId) === list) this.unwritten.delete(diffId);
    };
    return this.writer.write(this.file(diffId), () => jsonText(list)).then(settled, settled);
  }
}
