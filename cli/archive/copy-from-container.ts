/**
 * `engine cp CONTAINER:SRC DEST`: the daemon's tar of SRC (`GET /containers/{id}/archive`),
 * to stdout as it is for `-`, or extracted where the Docker CLI's CopyTo puts it: into DEST when
 * it is a folder, else into DEST's folder under DEST's name. With -L a symlink SRC is the file
 * it points to, kept under the link's name.
 */
import { lstatSync, readlinkSync, statSync } from "node:fs";
import { posix } from "node:path";
import { pipeline } from "node:stream/promises";
import type { Connection } from "../connection.js";
import { counted, decodePathStat, isDirMode, isSymlinkMode, statContainerPath, type Transfer } from "./container-path.js";
import { getRebaseName, goClean, prepareArchiveCopy, splitPathDirEntry, type CopyInfo } from "./copy-paths.js";
import { pathError } from "./go-errors.js";
import { extractLocal } from "./host-files.js";
import { rebaseArchiveEntries } from "./rebase-tar.js";

export interface CopyRequest {
  container: string;
  srcPath: string;
  dstPath: string;
  followLink: boolean;
  copyUIDGID: boolean;
}

/** The Docker CLI's ValidateOutputPath (cp's older wording). */
function validateOutputPath(path: string): void {
  const dir = posix.dirname(goClean(path));
  if (dir !== "" && dir !== ".") {
    try {
      statSync(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") throw new Error(`invalid output path: directory "${dir}" does not exist`);
    }
  }
  let st;
  try {
    st = statSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
    throw pathError("stat", path, e);
  }
  if (st.isDirectory() || st.isFile()) return;
  if (st.isBlockDevice() || st.isCharacterDevice()) throw new Error(`invalid output path: "${path}" must be a directory or a regular file: got a device`);
}

/** go-archive's CopyInfoDestinationPath: DEST with its symlinks followed; only its folder need exist. */
function destinationInfo(path: string): CopyInfo {
  let p = path;
  for (let hops = 0; ; hops++) {
    let st;
    try {
      st = lstatSync(p);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw pathError("lstat", p, e);
      const parent = splitPathDirEntry(p).dir;
      let ps;
      try {
        ps = statSync(parent);
      } catch (e2) {
        throw pathError("stat", parent, e2);
      }
      if (!ps.isDirectory()) throw new Error("not a directory");
      return { path: p, exists: false, isDir: false, rebaseName: "" };
    }
    if (!st.isSymbolicLink()) return { path: p, exists: true, isDir: st.isDirectory(), rebaseName: "" };
    if (hops >= 10) throw new Error(`too many symlinks in ${path}`);
    const target = readlinkSync(p);
    p = target.startsWith("/") ? target : posix.join(splitPathDirEntry(p).dir, target);
  }
}

/** Copies, or throws with the CLI's message; `transfer` tells what went. */
export async function copyFromContainer(conn: Connection, req: CopyRequest, transfer: Transfer, stdout: NodeJS.WritableStream): Promise<void> {
  const { container, dstPath } = req;
  let srcPath = req.srcPath;
  validateOutputPath(dstPath);
  let rebaseName = "";
  if (req.followLink) {
    const st = await statContainerPath(conn, container, srcPath);
    if (st && isSymlinkMode(st.mode)) {
      const target = st.linkTarget.startsWith("/") ? st.linkTarget : posix.join(splitPathDirEntry(srcPath).dir, st.linkTarget);
      ({ resolved: srcPath, rebaseName } = getRebaseName(srcPath, target));
    }
  }
  const res = await conn.call("GET", `/containers/${encodeURIComponent(container)}/archive`, { query: { path: srcPath } });
  if (dstPath === "-") {
    await pipeline(res.body, stdout, { end: false });
    return;
  }
  transfer.to = dstPath;
  const stat = decodePathStat(res.headers["x-docker-container-path-stat"]);
  const src: CopyInfo = { path: srcPath, exists: true, isDir: isDirMode(stat.mode), rebaseName };
  let tar = counted(res.body, transfer);
  if (rebaseName) tar = rebaseArchiveEntries(tar, splitPathDirEntry(srcPath).base, rebaseName);
  let target;
  try {
    const dst = destinationInfo(dstPath);
    target = prepareArchiveCopy(src, dst);
  } catch (e) {
    res.body.destroy();
    throw e;
  }
  if (target.rebase) tar = rebaseArchiveEntries(tar, target.rebase.from, target.rebase.to);
  await extractLocal(tar, target.dstDir);
}
