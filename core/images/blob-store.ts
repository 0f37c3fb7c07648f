/**
 * Content-addressed blobs (image configs, uncompressed layer tars, manifests) under
 * `blobs/sha256/<hex>`. A blob is written to a temporary file while its digest is computed,
 * checked against the digest it should have, and only then renamed into place: a blob in the
 * store always matches its name.
 */
import { createHash, randomBytes } from "node:crypto";
import { createReadStream, createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { errors } from "../errors.js";
import { PRIVATE_DIR, PRIVATE_FILE } from "../state-modes.js";
import { syncDir, syncFile } from "../fs/durable-file.js";

const isDigest = (d: string) => /^sha256:[a-f0-9]{64}$/.test(d);

export class BlobStore {
  private readonly dir: string;

  constructor(root: string, private readonly tmpDir: string) {
    this.dir = join(root, "blobs", "sha256");
    // image/, blobs/ and blobs/sha256/ alike: nobody else lists which images this host has
    mkdirSync(this.dir, { recursive: true, mode: PRIVATE_DIR });
    mkdirSync(tmpDir, { recursive: true, mode: PRIVATE_DIR });
  }

  path(digest: string): string {
    if (!isDigest(digest)) throw errors.imageInvalidArchive(`not a sha256 digest: ${digest}`);
    return join(this.dir, digest.slice("sha256:".length));
  }

  /**
   * A fresh name in the store's temporary folder (same filesystem: `adopt` renames it in, and
   * the file keeps its mode: whoever writes it gives it PRIVATE_FILE).
   */
  tempPath(prefix: string): string {
    return join(this.tmpDir, `${prefix}-${randomBytes(8).toString("hex")}`);
  }

  has(digest: string): boolean {
    return isDigest(digest) && existsSync(this.path(digest));
  }

  size(digest: string): number {
    return statSync(this.path(digest)).size;
  }

  read(digest: string): Buffer {
    return readFileSync(this.path(digest));
  }

  open(digest: string): Readable {
    return createReadStream(this.path(digest));
  }

  /** Stores a stream; `expected` (when known) must be its digest, or nothing is kept. */
  async put(source: Readable, expected?: string): Promise<{ digest: string; size: number }> {
    const tmp = join(this.tmpDir, `blob-${randomBytes(8).toString("hex")}`);
    const hash = createHash("sha256");
    let size = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        hash.update(chunk);
        size += chunk.length;
        done(null, chunk);
      },
    });
    try {
      await pipeline(source, meter, createWriteStream(tmp, { mode: PRIVATE_FILE }));
      const digest = `sha256:${hash.digest("hex")}`;
      if (expected && expected !== digest) throw errors.imageDigestMismatch("blob", expected, digest);
      await syncFile(tmp);
      renameSync(tmp, this.path(digest));
      await syncDir(this.dir);
      return { digest, size };
    } finally {
      rmSync(tmp, { force: true });
    }
  }

  /**
   * Takes a file whose digest the caller computed (`digestOfFile`) into the store by renaming
   * it (no copy); across filesystems it is copied and checked like `put`.
   */
  async adopt(file: string, digest: string): Promise<void> {
    try {
      await syncFile(file);
      renameSync(file, this.path(digest));
      await syncDir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EXDEV") throw err;
      await this.put(createReadStream(file), digest);
    }
  }

  putBuffer(data: Buffer): Promise<{ digest: string; size: number }> {
    return this.put(Readable.from([data]));
  }

  list(): string[] {
    return readdirSync(this.dir).filter((f) => /^[a-f0-9]{64}$/.test(f)).map((f) => `sha256:${f}`);
  }

  remove(digest: string): void {
    rmSync(this.path(digest), { force: true });
  }
}

/** The sha256 digest of a file, read as a stream. */
export async function digestOfFile(path: string): Promise<{ digest: string; size: number }> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of createReadStream(path)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { digest: `sha256:${hash.digest("hex")}`, size };
}
