/**
 * The local side of `engine cp`, on the daemon's confined file access (host/containers/files):
 * a local file or folder as a tar (go-archive's TarResourceRebase: its entry first, under its
 * own name or `rebaseName`, then a folder's contents), and a tar extracted into a local folder
 * as the Docker CLI's Untar does (no owners from the tar: the files are the user's; a folder
 * never replaced by a file nor the reverse). Nothing is written outside that folder: names are
 * resolved in it as in a chroot, whatever symlinks the tar makes. Device nodes and FIFOs are
 * left out.
 */
import { realpathSync } from "node:fs";
import type { Readable } from "node:stream";
import { extractScoped, OverwriteError } from "../../host/containers/files/scoped-extract.js";
import { ScopedRoot } from "../../host/containers/files/scoped-fs.js";
import { packScoped } from "../../host/containers/files/scoped-pack.js";
import { splitPathDirEntry } from "./copy-paths.js";

/** The tar of the local `path` (not followed if a symlink), its entry named `rebaseName` or its own base name. */
export function tarLocal(path: string, rebaseName: string): Readable {
  const { dir, base } = splitPathDirEntry(path);
  // symlinks before the last part are the user's to follow, as the CLI's EvalSymlinks of the parent
  const root = ScopedRoot.open(realpathSync(dir));
  try {
    // "." is the folder itself: its entry is "./", its contents "./name"
    const r = base === "." ? root.resolve("/", { followLast: false }) : root.resolve(`/${base}`, { followLast: false });
    return packScoped({ dirFd: r.dirFd, name: r.name }, { rebase: rebaseName || base, release: () => (r.close(), root.close()) });
  } catch (e) {
    root.close();
    throw e;
  }
}

/** Extracts `tar` into the local folder `dir`; an overwrite refused is worded with local paths, as the CLI's. */
export async function extractLocal(tar: Readable, dir: string): Promise<void> {
  const root = ScopedRoot.open(realpathSync(dir));
  const dest = root.openDir("/");
  try {
    // every file the user's, as the CLI's Untar leaves them (it does not chown)
    await extractScoped(dest, tar, { noOverwriteDirNonDir: true, owner: { uid: process.getuid!(), gid: process.getgid!() } });
  } catch (e) {
    if (e instanceof OverwriteError) throw new Error(e.message.replace(/"(\/[^"]*)"/g, (_, p: string) => `"${p === "/" ? dir : `${dir.replace(/\/$/, "")}${p}`}"`));
    throw e;
  } finally {
    dest.close();
    root.close();
  }
}
