/**
 * Writing a download (`save -o`, `export -o`) to a file as the Docker CLI's atomic writer does:
 * the destination is checked before the daemon is asked (its folder must exist; an existing
 * destination must be a regular file, not a folder, a symlink or a device), the data goes to a
 * temporary file beside it, and only a complete download is renamed over the name, mode 0600.
 */
import { chmodSync, closeSync, createWriteStream, fsyncSync, lstatSync, openSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { ExitError } from "../command.js";
import { errnoText } from "./go-errors.js";

/** Throws an Error with the Docker CLI's message when `path` cannot take the output. */
function validateOutputPath(path: string): void {
  if (path === "") throw new Error("file name is empty");
  const dir = dirname(path);
  if (dir !== "." && dir !== "..") {
    let st;
    try {
      st = statSync(dir);
    } catch (e) {
      throw new Error(`invalid output path: stat ${dir}: ${errnoText(e as NodeJS.ErrnoException)}`);
    }
    if (!st.isDirectory()) throw new Error(`invalid output path: stat ${dir}: not a directory`);
  }
  let st;
  try {
    st = lstatSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
    throw new Error(`failed to stat output path: lstat ${path}: ${errnoText(e as NodeJS.ErrnoException)}`);
  }
  if (st.isFile()) {
    // Go's FileMode keeps these bits apart from "regular"
    if (st.mode & 0o4000) throw new Error("cannot write to a setuid file");
    if (st.mode & 0o2000) throw new Error("cannot write to a setgid file");
    if (st.mode & 0o1000) throw new Error("cannot write to a sticky bit file");
    return;
  }
  if (st.isDirectory()) throw new Error("cannot write to a directory");
  if (st.isSymbolicLink()) throw new Error("cannot write to a symbolic link directly");
  if (st.isFIFO()) throw new Error("cannot write to a named pipe (FIFO)");
  if (st.isSocket()) throw new Error("cannot write to a socket");
  if (st.isCharacterDevice()) throw new Error("cannot write to a character device file");
  throw new Error("cannot write to a block device file");
}

/** Streams `body` into a temporary file beside `path`, then renames it over `path`. */
async function writeAtomically(path: string, body: Readable, mode = 0o600): Promise<void> {
  const target = resolve(path);
  const temp = `${dirname(target)}/.tmp-${basename(target)}${randomBytes(5).readUInt32BE(0)}`;
  try {
    await pipeline(body, createWriteStream(temp, { flags: "wx", mode: 0o600 }));
    const fd = openSync(temp, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    chmodSync(temp, mode);
    renameSync(temp, target);
  } finally {
    rmSync(temp, { force: true });
  }
}

/**
 * Where a download goes (`save`, `export`): the file `-o` names, checked before the daemon is
 * asked (its problem reported after `failure`, "failed to save image"), or stdout, refused
 * when it is a terminal. The returned function writes the download there.
 */
export function outputTarget(output: string, failure: string): (body: Readable) => Promise<void> {
  if (output === "") {
    if (process.stdout.isTTY) throw new ExitError(1, "cowardly refusing to save to a terminal. Use the -o flag or redirect");
    return (body) => pipeline(body, process.stdout, { end: false });
  }
  try {
    validateOutputPath(output);
  } catch (e) {
    throw new ExitError(1, `${failure}: ${(e as Error).message}`);
  }
  return (body) => writeAtomically(output, body);
}
