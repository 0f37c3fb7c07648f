/**
 * An image archive (the tar `docker save` writes, or an OCI image layout) unpacked into a
 * temporary folder, with its symlinks kept as a map (older `docker save` tars link layers
 * between folders) so that nothing in the archive is ever followed outside the folder.
 */
import { createWriteStream, mkdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import tarStream from "tar-stream";
import { errors } from "../../core/errors.js";
import { clientArchiveError } from "../client-archive-error.js";
import { PRIVATE_DIR, PRIVATE_FILE } from "../../core/state-modes.js";

export class ArchiveDir {
  private readonly links = new Map<string, string>();

  private constructor(readonly dir: string) {}

  /** Unpacks `tar` into `dir` (which must exist and be empty). */
  static async unpack(tar: Readable, dir: string): Promise<ArchiveDir> {
    const archive = new ArchiveDir(dir);
    const extract = tarStream.extract();
    const done = (async () => {
      for await (const entry of extract) {
        const name = archive.clean(entry.header.name);
        if (name === "") {
          entry.resume();
          continue;
        }
        if (entry.header.type === "file" || entry.header.type === "contiguous-file") {
          // its layer tars are moved into the blob store as they are: private from the start
          mkdirSync(dirname(join(dir, name)), { recursive: true, mode: PRIVATE_DIR });
          await pipeline(entry, createWriteStream(join(dir, name), { mode: PRIVATE_FILE }));
          continue;
        }
        if (entry.header.type === "directory") mkdirSync(join(dir, name), { recursive: true, mode: PRIVATE_DIR });
        else if (entry.header.type === "symlink" && entry.header.linkname) {
          archive.links.set(name, posix.normalize(posix.join(posix.dirname(name), entry.header.linkname)));
        }
        entry.resume();
      }
    })();
    try {
      await Promise.all([pipeline(tar, extract), done]);
    } catch (err) {
      throw clientArchiveError(err, errors.imageInvalidArchive);
    }
    return archive;
  }

  /** An archive member's name, made relative; one that climbs out of the archive is refused. */
  private clean(raw: string): string {
    const name = posix.normalize(raw.replace(/^\/+/, "")).replace(/^\.\/?/, "").replace(/\/$/, "");
    if (name === ".." || name.startsWith("../")) throw errors.imageInvalidArchive(`member "${raw}" points outside the archive`);
    return name;
  }

  /** The file behind a member name, following the archive's own symlinks. */
  path(member: string): string {
    let name = this.clean(member);
    for (let hops = 0; this.links.has(name); hops++) {
      if (hops > 16) throw errors.imageInvalidArchive(`too many symlinks at "${member}"`);
      name = this.clean(this.links.get(name)!);
    }
    const file = join(this.dir, name);
    const stat = statSync(file, { throwIfNoEntry: false });
    if (!stat) throw errors.imageInvalidArchive(`"${member}" is missing from the archive`);
    if (!stat.isFile()) throw errors.imageInvalidArchive(`"${member}" is not a file in the archive`);
    return file;
  }

  has(member: string): boolean {
    try {
      this.path(member);
      return true;
    } catch {
      return false;
    }
  }

  json<T>(member: string): T {
    try {
      return JSON.parse(readFileSync(this.path(member), "utf8")) as T;
    } catch (err) {
      throw errors.imageInvalidArchive(`${member}: ${(err as Error).message}`);
    }
  }

  read(member: string): Buffer {
    return readFileSync(this.path(member));
  }
}
