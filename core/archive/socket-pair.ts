/**
 * A connected pair of unix stream sockets, one of them read with `onread` (Node reads into one
 * buffer of ours, again and again, instead of allocating a new Buffer for each read). Node can
 * give that option only to a socket it connects, not to a child process's stdout, so the pair
 * is made by listening in a private folder (mode 0700: only root can connect), connecting,
 * and removing the socket file again; the other end goes to a child as its stdout.
 *
 * The folder: the daemon's own (`usePairFolder`: `<exec-root>/pairs`, emptied at each start), so
 * that a socket file left by a daemon killed between listen and unlink is found and removed by
 * the next start, and never by another daemon that shares the temporary folder. Without one (a
 * process that is not the daemon), or when the daemon's path is too long for a socket's address,
 * each pair gets a folder of its own in the temporary folder, removed at once.
 * (An abstract socket would leave nothing behind, but any local user can see its name in
 * /proc/net/unix and connect first, taking the decompressed layer.)
 */
import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readdirSync, unlinkSync } from "node:fs";
import { mkdtemp, rmdir, unlink } from "node:fs/promises";
import { connect, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface OnRead {
  buffer: Buffer;
  /** `buffer[0..n)` was read; returning false stops reading until `socket.resume()`. */
  callback: (n: number, buffer: Buffer) => boolean;
}

/** sun_path holds 108 bytes, the terminating NUL included. */
const MAX_SOCKET_PATH = 107;
/** `<folder>/` + 16 hex digits. */
const NAME_LENGTH = 17;

let pairFolder: string | undefined;

/**
 * Makes pairs in `dir` from now on (created 0700, and emptied of what an earlier process of the
 * same owner left there); `undefined` goes back to the temporary folder. The daemon calls it at
 * start with a folder under its exec root.
 */
export function usePairFolder(dir: string | undefined): void {
  pairFolder = undefined;
  if (dir === undefined || Buffer.byteLength(dir) + NAME_LENGTH > MAX_SOCKET_PATH) return;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700); // (one made before, by hand or by an older daemon)
  for (const name of readdirSync(dir)) unlinkQuietly(join(dir, name));
  pairFolder = dir;
}

export async function socketPair(onread: OnRead): Promise<{ ours: Socket; theirs: Socket }> {
  const own = pairFolder === undefined ? await mkdtemp(join(tmpdir(), "engine-pair-")) : undefined;
  const path = own === undefined ? join(pairFolder!, randomBytes(8).toString("hex")) : join(own, "s");
  const server = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(path, () => resolve());
    });
    const accepted = new Promise<Socket>((resolve) => server.once("connection", resolve));
    const ours = connect({ path, onread });
    await new Promise<void>((resolve, reject) => {
      ours.once("error", reject);
      ours.once("connect", () => {
        ours.off("error", reject);
        resolve();
      });
    });
    return { ours, theirs: await accepted };
  } finally {
    // (not waited for: it calls back once the accepted connection has closed too)
    server.close();
    if (own === undefined) {
      unlinkQuietly(path); // at once: the shorter the window, the less a kill can leave
    } else {
      // unlink and rmdir, not rm's recursive removal, which costs Node ~40 ms to load on its
      // first use (at the start of a daemon's first pull)
      await unlink(path).catch(() => undefined);
      await rmdir(own).catch(() => undefined); // (an empty folder left in the temporary one at worst)
    }
  }
}

/** (a socket file; gone already, or never made when listen failed) */
function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // nothing to remove
  }
}
