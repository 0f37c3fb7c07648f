/**
 * `engine cp SRC CONTAINER:DEST`: SRC tarred here (or a tar from stdin for `-`) and extracted by
 * the daemon (`PUT /containers/{id}/archive`) where the Docker CLI puts it: into DEST when it is
 * a folder in the container, else into DEST's folder with the entry renamed to DEST's name.
 * With -L a symlink SRC is copied as the file it points to; with -a the owners are the tar's.
 */
import { lstatSync, realpathSync } from "node:fs";
import { posix } from "node:path";
import type { Readable } from "node:stream";
import { DaemonError, type Connection } from "../connection.js";
import { counted, fileModeProblem, isDirMode, isSymlinkMode, statContainerPath, type Transfer } from "./container-path.js";
import type { CopyRequest } from "./copy-from-container.js";
import { getRebaseName, hasTrailingSeparator, prepareArchiveCopy, splitPathDirEntry, type CopyInfo } from "./copy-paths.js";
import { pathError } from "./go-errors.js";
import { tarLocal } from "./host-files.js";
import { rebaseArchiveEntries } from "./rebase-tar.js";

/** go-archive's CopyInfoSourcePath: symlinks before the last part followed (all of them with -L). */
function sourceInfo(path: string, followLink: boolean): CopyInfo {
  let resolved: string;
  let rebaseName = "";
  if (followLink) {
    try {
      resolved = realpathSync(path);
    } catch (e) {
      throw pathError("lstat", path, e);
    }
    ({ resolved, rebaseName } = getRebaseName(path, resolved));
  } else {
    const slash = path.lastIndexOf("/");
    const dir = path.slice(0, slash + 1);
    const base = path.slice(slash + 1);
    let realDir: string;
    try {
      realDir = realpathSync(dir || ".");
    } catch (e) {
      throw pathError("lstat", dir, e);
    }
    // as go-archive joins them: a file of / is `//name` (its lstat error says so)
    resolved = `${realDir}/${base}`;
    if (hasTrailingSeparator(path) && posix.basename(path) !== posix.basename(resolved)) rebaseName = posix.basename(path);
  }
  let st;
  try {
    st = lstatSync(resolved);
  } catch (e) {
    throw pathError("lstat", resolved, e);
  }
  return { path: resolved, exists: true, isDir: st.isDirectory(), rebaseName };
}

/** Copies, or throws with the CLI's message; `transfer` tells what went. */
export async function copyToContainer(conn: Connection, req: CopyRequest, transfer: Transfer, stdin: Readable): Promise<void> {
  const { container, srcPath, dstPath } = req;
  const dst: CopyInfo = { path: dstPath, exists: false, isDir: false, rebaseName: "" };
  let st = await statContainerPath(conn, container, dstPath);
  if (st) {
    if (isSymlinkMode(st.mode)) {
      dst.path = st.linkTarget.startsWith("/") ? st.linkTarget : posix.join(splitPathDirEntry(dstPath).dir, st.linkTarget);
      st = await statContainerPath(conn, container, dst.path);
    }
    if (st) {
      const problem = fileModeProblem(st.mode);
      if (problem) throw new Error(`destination "${container}:${dstPath}" must be a directory or a regular file: ${problem}`);
      dst.exists = true;
      dst.isDir = isDirMode(st.mode);
    }
  }
  let content: Readable;
  let dstDir: string;
  if (srcPath === "-") {
    if (!dst.isDir) throw new Error(`destination "${container}:${dstPath}" must be a directory`);
    content = stdin;
    dstDir = dst.path;
  } else {
    const src = sourceInfo(srcPath, req.followLink);
    const prepared = prepareArchiveCopy(src, dst);
    let tar = tarLocal(src.path, src.rebaseName);
    if (prepared.rebase) tar = rebaseArchiveEntries(tar, prepared.rebase.from, prepared.rebase.to);
    content = counted(tar, transfer);
    dstDir = prepared.dstDir;
  }
  transfer.to = `${container}:${dst.path}`;
  try {
    const res = await conn.call("PUT", `/containers/${encodeURIComponent(container)}/archive`, {
      query: { copyUIDGID: req.copyUIDGID ? "true" : undefined, noOverwriteDirNonDir: "true", path: dstDir },
      raw: content,
      contentType: "application/x-tar",
    });
    res.body.resume();
  } catch (e) {
    if (e instanceof DaemonError) throw e;
    // the daemon may refuse at once (no such container) and close the connection under the
    // body still being sent, its answer lost to the write's EPIPE: the reason is asked again
    await conn.getJson(`/containers/${encodeURIComponent(container)}/json`);
    throw e;
  }
}
