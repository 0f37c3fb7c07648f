/**
 * Extracts a tar into a directory of a container (`PUT /containers/{id}/archive`), as Docker's
 * `archive.Untar` does, but through scoped-fs so that nothing lands outside the container's root
 * whatever the tar holds or the container does meanwhile.
 *
 * Entry names are cleaned first (`..` climbing above the destination fails the copy). Parents
 * are resolved inside the container root (a symlinked parent is followed as a chroot into the
 * root would: `link -> /` then `link/x` writes the container's `/x`) and made when missing. An
 * existing entry is replaced, except a directory by a directory (its metadata is updated);
 * with `noOverwriteDirNonDir` (the Docker CLI always asks for it) replacing a directory by a
 * non-directory or the reverse fails. Owners come from the tar, or all from `owner`
 * (`copyUIDGID` for a container with a user); directory times are set last. `.wh.` names are
 * ordinary files here, as in Docker's Untar. Extended attributes are not applied.
 *
 * Device nodes and FIFOs are never made, nor hard links to them (skipped-entries.ts says why):
 * they are left out, whatever is at their name stays as it was, and the rest of the tar is still
 * copied; the result lists what was left out.
 */
import { closeSync, fchmodSync, fchownSync, futimesSync, lchownSync, lutimesSync } from "node:fs";
import type { Readable } from "node:stream";
import { extract } from "tar-stream";
import { sparseInfo } from "../../../core/archive/file-data.js";
import { writeFileData } from "../../../core/archive/file-data.js";
import { entryMeta, type EntryMeta, type TarHeader } from "../../../core/archive/metadata.js";
import { installBinaryPax } from "../../../core/archive/pax-binary.js";
import { cleanEntryName, LayerEntryError } from "../../../core/archive/safe-path.js";
import { at, createFileAt, linkAt, lstatAt, mkdirAt, openDirAt, removeAt, symlinkAt, type Resolved, type ScopedDir } from "./scoped-fs.js";
import { SkippedEntries, type SkipKind } from "./skipped-entries.js";
import { hostOwner, rootOwner, type IdMap } from "../../../core/userns/id-map.js";

export interface ExtractOptions {
  noOverwriteDirNonDir: boolean;
  /** Owner of every entry (copyUIDGID); else each entry's own from the tar. */
  owner?: { uid: number; gid: number };
  /**
   * The daemon's user namespace map (`--userns-remap`): owners are container ids, written as
   * the host ids they stand for; folders made on the way belong to the remapped root.
   */
  idMap?: IdMap;
}

/** A conflict `noOverwriteDirNonDir` forbids; the message is Docker's. */
export class OverwriteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OverwriteError";
  }
}

/** Entry types that are left out (never made in a container). */
const NODE_TYPES: Record<string, SkipKind> = { "character-device": "character device", "block-device": "block device", fifo: "FIFO" };

function join(dir: string, parts: readonly string[]): string {
  const rest = parts.join("/");
  if (rest === "") return dir;
  return dir === "/" ? `/${rest}` : `${dir}/${rest}`;
}

/** What an extraction did not copy. */
export interface ExtractResult {
  skipped: SkippedEntries;
}

/**
 * Extracts `tar` (uncompressed) into the open directory `dest`. Entries are resolved from that
 * directory as it was opened, even if the container renames it or swaps its name meanwhile.
 */
export async function extractScoped(dest: ScopedDir, tar: Readable, opts: ExtractOptions): Promise<ExtractResult> {
  installBinaryPax();
  const x = new ScopedExtractor(dest, opts);
  const ex = extract({ allowUnknownFormat: true } as Parameters<typeof extract>[0]);
  let sourceError: Error | undefined;
  const onSourceError = (e: Error) => {
    sourceError = e;
    ex.destroy(e);
  };
  tar.once("error", onSourceError);
  tar.pipe(ex as unknown as NodeJS.WritableStream);
  try {
    for await (const entry of ex) {
      const header = entry.header as unknown as TarHeader;
      try {
        await x.entry(header, entry as unknown as AsyncIterable<Buffer>);
      } catch (e) {
        if (e instanceof LayerEntryError || e instanceof OverwriteError) throw e;
        throw new LayerEntryError(header.name, (e as Error).message, { cause: e });
      }
      for await (const _ of entry); // its data must be consumed
    }
    x.finish();
    return { skipped: x.skipped };
  } catch (e) {
    tar.unpipe(ex as unknown as NodeJS.WritableStream);
    tar.destroy();
    ex.destroy();
    throw sourceError ?? e;
  } finally {
    tar.off("error", onSourceError);
    x.close();
  }
}

class ScopedExtractor {
  /** The parent directory of the last entry, kept open for the next one in the same directory. */
  private parent?: { key: string; r: Resolved };
  private readonly dirTimes: { rel: string; meta: EntryMeta }[] = [];
  /** The destination's path, for messages. */
  private readonly destPath: string;
  readonly skipped = new SkippedEntries();
  /**
   * Names (relative to the destination) whose entry was left out and not written since: a hard
   * link to one is left out too. One string per skipped entry, as the tar's own size bounds.
   */
  private readonly skippedNames = new Set<string>();

  constructor(
    private readonly dest: ScopedDir,
    private readonly opts: ExtractOptions,
  ) {
    this.destPath = dest.path;
  }

  close(): void {
    this.parent?.r.close();
    this.parent = undefined;
  }

  /** Forgets the kept parent: something was removed or a symlink made, so a path may mean another directory now. */
  private forget(): void {
    this.close();
  }

  private parentOf(parts: string[]): Resolved {
    const key = parts.slice(0, -1).join("/");
    if (this.parent?.key === key) return this.parent.r;
    this.close();
    const r = this.dest.resolve(key, { followLast: true, create: true, owner: this.opts.idMap ? rootOwner(this.opts.idMap) : undefined });
    if (r.name !== "") {
      r.close();
      throw new Error(`${r.path} is not a directory`);
    }
    this.parent = { key, r };
    return r;
  }

  private owner(meta: EntryMeta): { uid: number; gid: number } {
    const own = this.opts.owner ?? { uid: meta.uid, gid: meta.gid };
    return this.opts.idMap ? hostOwner(this.opts.idMap, own) : own;
  }

  async entry(h: TarHeader, data: AsyncIterable<Buffer>): Promise<void> {
    const isFile = h.type === "file" || h.type === "contiguous-file";
    const sparse = isFile ? sparseInfo(h.pax) : undefined;
    const parts = cleanEntryName(sparse?.name ?? h.name);
    if (parts.length === 0) return; // the destination itself: it exists and stays as it is
    const rel = parts.join("/");
    const skip = h.type ? NODE_TYPES[h.type] : undefined;
    if (skip) return this.skip(parts, skip);
    if (h.type === "link" && this.skippedNames.has(linkTarget(h.linkname ?? "").join("/"))) return this.skip(parts, "hard link to a skipped entry");
    this.skippedNames.delete(rel); // written now: a later hard link to it is a real one
    const meta = entryMeta(h);
    const dir = this.parentOf(parts);
    const name = parts[parts.length - 1];
    const path = join(dir.path, [name]);
    const isDir = h.type === "directory";

    const existing = lstatAt(dir.dirFd, name);
    if (existing) {
      if (this.opts.noOverwriteDirNonDir && existing.isDirectory() && !isDir) {
        throw new OverwriteError(`cannot overwrite directory "${path}" with non-directory "${this.destPath}"`);
      }
      if (this.opts.noOverwriteDirNonDir && !existing.isDirectory() && isDir) {
        throw new OverwriteError(`cannot overwrite non-directory "${path}" with directory "${this.destPath}"`);
      }
      if (!(existing.isDirectory() && isDir)) {
        // a hard link entry to this very name must not lose its target
        if (h.type === "link" && cleanEntryName(h.linkname ?? "").join("/") === rel) return;
        removeAt(dir.dirFd, name);
        if (existing.isDirectory() || existing.isSymbolicLink()) this.forget();
      }
    }
    const parentFd = this.parentOf(parts).dirFd;
    const owner = this.owner(meta);

    if (isDir) {
      if (!existing?.isDirectory()) mkdirAt(parentFd, name, 0o700);
      const fd = openDirAt(parentFd, name);
      try {
        fchownSync(fd, owner.uid, owner.gid);
        fchmodSync(fd, meta.mode);
      } finally {
        closeSync(fd);
      }
      this.dirTimes.push({ rel: parts.join("/"), meta });
      return;
    }
    if (isFile) {
      const size = sparse ? sparse.size : (h.size ?? 0);
      if (!Number.isSafeInteger(size) || size < 0) throw new Error("a bad file size");
      const fd = createFileAt(parentFd, name);
      try {
        await writeFileData(fd, data, size, sparse);
        fchownSync(fd, owner.uid, owner.gid);
        fchmodSync(fd, meta.mode);
        futimesSync(fd, meta.atime, meta.mtime);
      } finally {
        closeSync(fd);
      }
      return;
    }
    if (h.type === "symlink") {
      if (!h.linkname) throw new Error("symlink without a target");
      symlinkAt(h.linkname, parentFd, name);
      this.forget();
      const linkPath = at(this.parentOf(parts).dirFd, name);
      lchownSync(linkPath, owner.uid, owner.gid);
      lutimesSync(linkPath, meta.atime, meta.mtime);
      return;
    }
    if (h.type === "link") return this.hardlink(parentFd, name, h.linkname ?? "");
    throw new Error(`unsupported entry type ${h.type ?? "(GNU sparse or another tar extension)"}`);
  }

  /** Leaves the entry at `parts` out: nothing is made or removed there. */
  private skip(parts: string[], kind: SkipKind): void {
    this.skippedNames.add(parts.join("/"));
    this.skipped.add(join(this.destPath, parts), kind);
  }

  /** A hard link to an entry under the destination (as Docker, a target outside it is refused). */
  private hardlink(parentFd: number, name: string, linkname: string): void {
    const targetParts = linkTarget(linkname);
    if (targetParts.length === 0) throw new Error("hard link to the destination itself");
    const t = this.dest.resolve(targetParts.join("/"), { followLast: false });
    try {
      if (t.name === "" || !lstatAt(t.dirFd, t.name)) throw new Error(`hard link target "${linkname}" does not exist`);
      linkAt(t.dirFd, t.name, parentFd, name);
    } finally {
      t.close();
    }
  }

  /** Directory times, last: writing into a directory changes its mtime. */
  finish(): void {
    this.close();
    for (const { rel, meta } of this.dirTimes.reverse()) {
      let r: Resolved;
      try {
        r = this.dest.resolve(rel, { followLast: false });
      } catch {
        continue; // gone meanwhile
      }
      try {
        if (r.name === "") continue;
        const fd = openDirAt(r.dirFd, r.name);
        try {
          futimesSync(fd, meta.atime, meta.mtime);
        } finally {
          closeSync(fd);
        }
      } catch {
        // replaced by a non-directory meanwhile: nothing to date
      } finally {
        r.close();
      }
    }
  }
}

/** A hard link's target as components under the destination; one outside it is refused. */
function linkTarget(linkname: string): string[] {
  try {
    return cleanEntryName(linkname);
  } catch {
    throw new Error(`invalid hardlink "${linkname}": outside of the destination`);
  }
}
