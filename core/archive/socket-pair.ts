/**
 * A connected pair of unix stream sockets, one of them read with `onread` (Node reads into one
 * buffer of ours, again and again, instead of allocating a new Buffer for each read). Node can
 * give that option only to a socket it connects, not to a child process's stdout, so the pair
 * is made by listening in a private folder (mode 0700: only this user can connect), connecting,
 * and removing the folder again; the other end goes to a child as its stdout.
 */
import { mkdtemp, rmdir, unlink } from "node:fs/promises";
import { connect, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface OnRead {
  buffer: Buffer;
  /** `buffer[0..n)` was read; returning false stops reading until `socket.resume()`. */
  callback: (n: number, buffer: Buffer) => boolean;
}

export async function socketPair(onread: OnRead): Promise<{ ours: Socket; theirs: Socket }> {
  const dir = await mkdtemp(join(tmpdir(), "engine-pair-"));
  const server = createServer();
  try {
    const path = join(dir, "s");
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
    // unlink and rmdir, not rm's recursive removal, which costs Node ~40 ms to load on its
    // first use (at the start of a daemon's first pull)
    await unlink(join(dir, "s")).catch(() => undefined);
    await rmdir(dir).catch(() => undefined); // (an empty folder left in the temporary one at worst)
  }
}
