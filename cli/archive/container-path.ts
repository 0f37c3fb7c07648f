/**
 * A path in a container as `docker cp` asks about it: `HEAD /containers/{id}/archive?path=`,
 * whose `X-Docker-Container-Path-Stat` header holds the entry's name, size, Go file mode and
 * symlink target; and the bytes of a tar counted as they pass (the summary line's size).
 */
import { Transform, type Readable } from "node:stream";
import type { Connection } from "../connection.js";

// Go's os.FileMode type bits
const MODE_DIR = 2 ** 31;
const MODE_SYMLINK = 2 ** 27;
const MODE_DEVICE = 2 ** 26;
const MODE_IRREGULAR = 2 ** 19;

export interface PathStat {
  name: string;
  size: number;
  mode: number;
  linkTarget: string;
}

export const isDirMode = (mode: number): boolean => Math.floor(mode / MODE_DIR) % 2 === 1;
export const isSymlinkMode = (mode: number): boolean => Math.floor(mode / MODE_SYMLINK) % 2 === 1;

/** The Docker CLI's ValidateOutputPathFileMode: "" for a mode it accepts, else why not. */
export function fileModeProblem(mode: number): string {
  if (Math.floor(mode / MODE_DEVICE) % 2 === 1) return "got a device";
  if (Math.floor(mode / MODE_IRREGULAR) % 2 === 1) return "got an irregular file";
  return "";
}

export function decodePathStat(header: string | undefined): PathStat {
  const stat = JSON.parse(Buffer.from(header ?? "", "base64").toString("utf8") || "{}") as Partial<PathStat>;
  return { name: stat.name ?? "", size: stat.size ?? 0, mode: stat.mode ?? 0, linkTarget: stat.linkTarget ?? "" };
}

/** The stat of `path` in the container, or undefined when the daemon has none to give (missing, no container). */
export async function statContainerPath(conn: Connection, container: string, path: string): Promise<PathStat | undefined> {
  const res = await conn.request("HEAD", `/containers/${encodeURIComponent(container)}/archive`, { query: { path } });
  res.body.resume();
  if (res.status !== 200) return undefined;
  return decodePathStat(res.headers["x-docker-container-path-stat"]);
}

/**
 * What a copy reports once its transfer began (even when it then fails): the tar's bytes so
 * far and where they went.
 */
export interface Transfer {
  bytes: number;
  /** Set when the transfer begins: the destination as the summary line names it. */
  to?: string;
}

/** Passes `source` through, adding its byte count to `counter.bytes`. */
export function counted(source: Readable, counter: { bytes: number }): Readable {
  const t = new Transform({
    transform(chunk: Buffer, _enc, done) {
      counter.bytes += chunk.length;
      done(null, chunk);
    },
  });
  source.once("error", (e) => t.destroy(e));
  return source.pipe(t);
}
