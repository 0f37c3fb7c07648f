/**
 * The `X-Docker-Container-Path-Stat` header of `HEAD`/`GET /containers/{id}/archive`: base64 of
 * `{"name","size","mode","mtime","linkTarget"}` as Docker's `container.PathStat` marshals, the
 * mode in Go's `os.FileMode` bits (the Docker CLI tests them: `Mode.IsDir()`, `ModeSymlink`).
 */
import { constants, type BigIntStats } from "node:fs";
import { formatRFC3339Nano } from "../../../core/rfc3339-nano.js";

// Go's os.FileMode type bits (io/fs).
const MODE_DIR = 2 ** 31;
const MODE_SYMLINK = 2 ** 27;
const MODE_DEVICE = 2 ** 26;
const MODE_NAMED_PIPE = 2 ** 25;
const MODE_SOCKET = 2 ** 24;
const MODE_SETUID = 2 ** 23;
const MODE_SETGID = 2 ** 22;
const MODE_CHAR_DEVICE = 2 ** 21;
const MODE_STICKY = 2 ** 20;

export interface PathStat {
  name: string;
  size: number;
  mode: number;
  mtime: string;
  linkTarget: string;
}

/** A Linux st_mode as Go's os.FileMode (what os.Lstat's Mode() gives). */
function goFileMode(stMode: number): number {
  let mode = stMode & 0o777;
  switch (stMode & constants.S_IFMT) {
    case constants.S_IFBLK:
      mode += MODE_DEVICE;
      break;
    case constants.S_IFCHR:
      mode += MODE_DEVICE + MODE_CHAR_DEVICE;
      break;
    case constants.S_IFDIR:
      mode += MODE_DIR;
      break;
    case constants.S_IFIFO:
      mode += MODE_NAMED_PIPE;
      break;
    case constants.S_IFLNK:
      mode += MODE_SYMLINK;
      break;
    case constants.S_IFSOCK:
      mode += MODE_SOCKET;
      break;
  }
  if (stMode & 0o4000) mode += MODE_SETUID;
  if (stMode & 0o2000) mode += MODE_SETGID;
  if (stMode & 0o1000) mode += MODE_STICKY;
  return mode;
}

/** The stat of `name` (the base of the requested path) as Docker reports it. */
export function pathStat(name: string, st: BigIntStats, linkTarget: string): PathStat {
  return {
    name,
    size: Number(st.size),
    mode: goFileMode(Number(st.mode)),
    mtime: formatRFC3339Nano(st.mtimeNs),
    linkTarget,
  };
}

export function statHeader(stat: PathStat): string {
  return Buffer.from(JSON.stringify(stat)).toString("base64");
}
