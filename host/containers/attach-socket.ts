/**
 * Input for a container's (or an exec's) stdin, through conmon's attach socket. That socket is
 * SOCK_SEQPACKET, which Node's `net` cannot open, hence `node-unix-socket`. What is written
 * before the socket is connected (input typed while the container is still starting) is kept
 * and sent once it is. conmon also sends every attached client the output, one packet per
 * chunk with a stream byte first; the output reaches clients through the log instead (nothing
 * is lost before an attach connects), so those packets are read and dropped: a client that does
 * not read would make conmon's writes to it fail.
 *
 * What is written waits in this process until the socket takes it: `write` answers false past
 * `INPUT_BUFFER_BYTES`, and the caller stops reading its client until `ready()` (a container
 * that does not read its stdin makes conmon stop reading the socket, and the client waits).
 *
 * Ending the connection is how stdin is closed: conmon closes the process's stdin when its
 * attached client goes, unless it runs with `--leave-stdin-open` (a container without
 * StdinOnce, or with a TTY).
 */
import { closeSync, constants as fsConstants, openSync } from "node:fs";
import { basename, dirname } from "node:path";
import type { SeqpacketSocket } from "node-unix-socket";
import { lazyRequire } from "../../core/lazy-require.js";

// (a native add-on, loaded with the first attach: core/lazy-require.ts)
const unixSocket = lazyRequire<typeof import("node-unix-socket")>("node-unix-socket");

/** How long a connection whose input has ended stays open for conmon to read its end. */
const LINGER_MS = 2000;

/** conmon reads at most this much from the socket at a time; a longer packet would be cut. */
const PACKET = 4096;

/** Input this process holds for the socket (before it connects, or not yet taken) before `write` says wait. */
export const INPUT_BUFFER_BYTES = 256 * 1024;

export class AttachInput {
  private readonly socket: SeqpacketSocket = new (unixSocket().SeqpacketSocket)();
  private connected = false;
  private closed = false;
  private pending: Buffer[] = [];
  /** Bytes written and not yet taken by the socket (pending ones included). */
  private held = 0;
  private waiters: (() => void)[] = [];

  /**
   * `output` (CRI attach): each packet conmon sends, its stream byte first (2 stdout, 3 stderr),
   * and the end of the connection (conmon closed it: the container has exited).
   */
  constructor(path: string, onError: (err: Error) => void = () => {}, output?: { data(packet: Buffer): void; end(): void }) {
    this.socket.on("data", (packet: Buffer) => output?.data(packet));
    if (output) {
      this.socket.once("end", () => output.end());
      this.socket.once("close", () => output.end());
    }
    this.socket.on("error", (err: Error) => {
      this.closed = true;
      this.socket.destroy();
      this.wakeWaiters();
      onError(err);
    });
    let dirFd: number | undefined;
    try {
      // A socket path is limited to 107 bytes, and a bundle's is longer: the socket is reached
      // through a descriptor of its folder (`/proc/self/fd/N/attach`), as conmon itself does.
      dirFd = openSync(dirname(path), fsConstants.O_RDONLY | fsConstants.O_DIRECTORY);
      const fd = dirFd;
      this.socket.connect(`/proc/self/fd/${fd}/${basename(path)}`, () => {
        closeSync(fd);
        this.connected = true;
        const pending = this.pending;
        this.pending = [];
        for (const chunk of pending) this.send(chunk);
        if (this.closed) this.finish();
      });
    } catch (err) {
      if (dirFd !== undefined) closeSync(dirFd);
      this.closed = true;
      queueMicrotask(() => onError(err as Error));
    }
  }

  private send(data: Buffer): void {
    for (let at = 0; at < data.length; at += PACKET) {
      const packet = data.subarray(at, at + PACKET);
      this.socket.write(packet, 0, packet.length, () => this.taken(packet.length));
    }
  }

  private taken(bytes: number): void {
    this.held -= bytes;
    if (this.held < INPUT_BUFFER_BYTES) this.wakeWaiters();
  }

  private wakeWaiters(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Resolves once the socket has taken enough that more may be written (or the input is closed). */
  ready(): Promise<void> {
    if (this.closed || this.held < INPUT_BUFFER_BYTES) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /**
   * A FIN after what was written: conmon reads it as the client's end (and closes the process's
   * stdin unless told to leave it open). The socket is closed only a while later, or when
   * conmon closes its side: a unix socket closed with unread data (output conmon sent us) makes
   * the peer's next read fail with ECONNRESET instead of reading the end, and conmon then never
   * closes the process's stdin (measured: `docker run -i busybox cat` hung 1 time in 4).
   */
  private finish(): void {
    this.socket.end();
    const timer = setTimeout(() => this.socket.destroy(), LINGER_MS);
    timer.unref();
    this.socket.once("end", () => {
      clearTimeout(timer);
      this.socket.destroy();
    });
  }

  /** False once the input waiting for the socket has reached INPUT_BUFFER_BYTES: wait for `ready()`. */
  write(data: Buffer): boolean {
    if (this.closed || data.length === 0) return true;
    this.held += data.length;
    if (this.connected) this.send(data);
    else this.pending.push(data);
    return this.held < INPUT_BUFFER_BYTES;
  }

  /** Ends the attachment: the process's stdin closes with it unless conmon was told to leave it open. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.wakeWaiters();
    // Not yet connected: what was typed is still sent, then the socket closes (see connect above).
    if (this.connected) this.finish();
  }
}
