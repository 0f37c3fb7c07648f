/**
 * Writing a stream to an HTTP client with back-pressure: a socket taken over (attach, exec
 * start) or a response written by hand (logs, events, stats). What the client has not read
 * yet waits in Node's buffer of that socket; past `CLIENT_BUFFER_BYTES` the writer waits for
 * it to drain before it reads on from its source, so a client that stops reading costs the
 * daemon that much memory (and the kernel's socket buffers), whatever the source holds.
 *
 * Producers that cannot wait (events, stats samples: they come whether anyone reads or not)
 * ask `hasRoom` and drop what does not fit, as Docker's daemon drops them for a slow reader.
 *
 * A client that goes away aborts `signal` (give it to the source: a log reader ends on it) and
 * every write answers false from then on; waiting writers are let go at once.
 */
import type { ServerResponse } from "node:http";
import type { Duplex, Writable } from "node:stream";

/** What a client's stream may hold unread in engined's memory before its writer waits. */
export const CLIENT_BUFFER_BYTES = 256 * 1024;

type Destination = Writable | ServerResponse;

export interface ClientStreamOptions {
  /** Defaults to CLIENT_BUFFER_BYTES. */
  bufferBytes?: number;
  /**
   * Called with true once a wait for the client has lasted `stallMs`, and with false when that
   * wait ends (the client read, or went away): attach holds the container's output meanwhile.
   */
  onStall?: (stalled: boolean) => void;
  stallMs?: number;
  /** Another reason to stop (a detach): writes answer false from then on, as if the client had gone. */
  until?: AbortSignal;
}

export class ClientStream {
  private readonly abort = new AbortController();
  private readonly bufferBytes: number;
  private readonly waiters = new Set<() => void>();
  private corked = false;

  constructor(
    private readonly dest: Destination,
    private readonly opts: ClientStreamOptions = {},
  ) {
    this.bufferBytes = opts.bufferBytes ?? CLIENT_BUFFER_BYTES;
    dest.on("drain", this.release);
    // A response says `drain` only after a write of its own answered false; corked writes that
    // went to the socket in one batch may have filled the socket alone, which then says it.
    this.socket?.on("drain", this.release);
    // A response's client sent its request whole: its end of input is its going away (as the
    // Go server of Docker's daemon takes it). The server keeps half-open connections (for
    // attach), so without this a client gone while nothing is written (a quiet events stream)
    // would be noticed only at the next write.
    this.socket?.once("end", this.gone);
    if (this.socket?.readableEnded) this.gone();
    dest.once("close", this.gone);
    dest.on("error", this.gone);
    opts.until?.addEventListener("abort", this.gone, { once: true });
    if (dest.destroyed || opts.until?.aborted) this.gone();
  }

  /** A response's connection (undefined for a socket taken over). */
  private get socket(): Duplex | undefined {
    const socket = (this.dest as ServerResponse).socket;
    return socket && socket !== this.dest ? socket : undefined;
  }

  /** Aborted when the client has gone away (or `until` aborted). */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get closed(): boolean {
    return this.abort.signal.aborted || this.dest.destroyed;
  }

  /** Whether a write now stays within the buffer (for producers that drop rather than wait). */
  get hasRoom(): boolean {
    return !this.closed && this.dest.writableLength < this.bufferBytes;
  }

  /**
   * Sends `chunk`; resolves at once while the buffer has room, else once the client has read
   * what was buffered. False when the client has gone (nothing more should be sent).
   */
  async write(chunk: Buffer | string): Promise<boolean> {
    if (this.closed) return false;
    this.batch();
    this.dest.write(chunk);
    if (this.dest.writableLength < this.bufferBytes) return true;
    this.flush();
    await this.waitForRoom();
    return !this.closed;
  }

  /** Sends `chunk` if it fits (see hasRoom); whether it was sent. */
  offer(chunk: Buffer | string): boolean {
    if (!this.hasRoom) return false;
    this.batch();
    this.dest.write(chunk);
    return true;
  }

  /** Ends the stream (with a last chunk) unless the client is gone; listeners are removed. */
  end(chunk?: Buffer | string): void {
    this.flush();
    if (!this.dest.destroyed && !this.dest.writableEnded) {
      if (chunk === undefined) this.dest.end();
      else this.dest.end(chunk);
    }
    this.dispose();
  }

  /** Stops listening to the destination (the stream is over, or another writer takes it on). */
  dispose(): void {
    this.dest.off("drain", this.release);
    this.socket?.off("drain", this.release);
    this.socket?.off("end", this.gone);
    this.dest.off("close", this.gone);
    this.opts.until?.removeEventListener("abort", this.gone);
    // the error listener stays: a late error of a socket without any would be thrown
    this.release();
  }

  /**
   * Writes that come one after another within one turn of the event loop (a log reader's
   * lines) go out together: corked, and uncorked on the next turn or when the buffer is full.
   */
  private batch(): void {
    if (this.corked) return;
    this.corked = true;
    this.dest.cork();
    setImmediate(() => this.flush());
  }

  private flush(): void {
    if (!this.corked) return;
    this.corked = false;
    this.dest.uncork();
  }

  private waitForRoom(): Promise<void> {
    if (this.closed || this.dest.writableLength < this.bufferBytes) return Promise.resolve();
    return new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      let stalled = false;
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        if (stalled) this.opts.onStall?.(false);
        resolve();
      };
      this.waiters.add(done);
      if (this.opts.onStall) {
        timer = setTimeout(() => {
          stalled = true;
          this.opts.onStall!(true);
        }, this.opts.stallMs ?? 100);
      }
    });
  }

  private readonly release = (): void => {
    for (const done of [...this.waiters]) done();
  };

  private readonly gone = (): void => {
    this.abort.abort();
    this.release();
  };
}
