/**
 * A decoder's output (decoders.ts): a Readable made before its source is known (the format is
 * told by the first bytes), with two ways out of it.
 *
 * - As a Readable, for any reader: chunks are pushed, and a source's borrowed chunks (a buffer
 *   it reads into again, see decoders.ts) are copied first.
 * - Directly (`directOutlet(readable)?.direct(consumer)`), for a reader that takes chunks as
 *   they come and keeps nothing of them once it has returned (or its promise has settled): the
 *   tar reader. No stream, no copy, no buffer per chunk: a command's output is read into the
 *   same buffer over and over. A reader may take this way only before anything was read.
 *
 * Taps (`tap`) see every chunk, in order, whichever way it goes out (the layer store's digest).
 */
import { Readable } from "node:stream";

/** The decoding half a decoder plugs into its outlet. */
export interface Source {
  write(chunk: Buffer): Promise<void> | undefined;
  end(): void;
  /** The reader wants more: let the source deliver again. */
  resume(): void;
  /** The output was destroyed: release what the source holds (kill a command). */
  stop(): void;
}

/** Takes a chunk, borrowed until it returns (or its promise settles). */
export type ChunkConsumer = (chunk: Buffer) => Promise<void> | undefined;

/** What `deliver` tells a source: go on, wait for `resume()`, or wait for the promise. */
export type Delivered = true | false | Promise<void>;

/** Output chunks are up to 1 MiB before the reader is asked to catch up. */
const OUTPUT_BUFFER = 1 << 20;
const OUTLET = Symbol("engine.archive.outlet");

/** The outlet behind a decoder's output, if it is one (for the direct way out). */
export function directOutlet(readable: Readable): Outlet | undefined {
  return (readable as Readable & { [OUTLET]?: Outlet })[OUTLET];
}

export class Outlet {
  private source: Source | undefined;
  readonly output: Readable;
  private readonly taps: ((chunk: Buffer) => void)[] = [];
  /** Nothing is delivered before a reader comes (so that taps and the direct way see it all). */
  private started = false;
  /** A chunk delivered before the start: the source waits for it to go out. */
  private held: { chunk: Buffer; borrowed: boolean; resolve: () => void } | undefined;
  /** The source ended before a reader came. */
  private closing = false;
  /** Every chunk went to the direct consumer. */
  private ended = false;
  private consumer: ChunkConsumer | undefined;
  private finished: { resolve: () => void; reject: (err: Error) => void } | undefined;
  /** What the direct consumer is still doing with the last chunk. */
  private pending: Promise<void> | undefined;

  /**
   * Settles when the last chunk has gone out (taken by the direct consumer, or read from the
   * Readable to its end), or with the output's failure.
   */
  readonly done: Promise<void>;

  constructor() {
    let settle!: { resolve: () => void; reject: (err: Error) => void };
    this.done = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    this.done.catch(() => undefined); // (awaited by whoever needs it)
    this.output = new Readable({
      highWaterMark: OUTPUT_BUFFER,
      read: () => {
        this.start();
        this.source?.resume();
      },
      destroy: (err, cb) => {
        this.source?.stop();
        this.held?.resolve();
        cb(err);
      },
    });
    (this.output as Readable & { [OUTLET]?: Outlet })[OUTLET] = this;
    this.output.once("end", () => settle.resolve());
    this.output.once("close", () => {
      if (this.output.errored) settle.reject(this.output.errored);
      else if (this.ended) settle.resolve();
      else settle.reject(Object.assign(new Error("Premature close"), { code: "ERR_STREAM_PREMATURE_CLOSE" }));
    });
  }

  plug(source: Source): Source {
    this.source = source;
    // made while the output went (a command started as the pull was cancelled): stopped at once
    if (this.output.destroyed) source.stop();
    return source;
  }

  /** Calls `fn` with every chunk (borrowed: copy what you keep); before the reader comes. */
  tap(fn: (chunk: Buffer) => void): void {
    if (this.started) throw new Error("a tap on a decoder output already read from");
    this.taps.push(fn);
  }

  /**
   * Hands every chunk to `consumer` instead of pushing it; resolves at the end of the output,
   * rejects with its failure. Refused (undefined) once the output was read as a Readable.
   */
  direct(consumer: ChunkConsumer): Promise<void> | undefined {
    if (this.started) return undefined;
    if (this.output.destroyed) return Promise.reject(this.output.errored ?? new Error("the decompressed stream was closed"));
    this.consumer = consumer;
    this.output.on("error", () => undefined); // told through the promise
    const done = new Promise<void>((resolve, reject) => (this.finished = { resolve, reject }));
    this.start();
    this.source?.resume();
    return done;
  }

  private start(): void {
    if (this.started) return;
    this.started = true;
    const held = this.held;
    this.held = undefined;
    if (held) {
      const delivered = this.deliver(held.chunk, held.borrowed);
      if (delivered instanceof Promise) delivered.then(held.resolve, held.resolve);
      else held.resolve();
    }
    if (this.closing) this.close();
  }

  /**
   * A decoded chunk; `borrowed` when the source reads into the same buffer again (so it is
   * copied before it is pushed). Tells the source whether to go on, wait for `resume()`
   * (false), or wait for the promise.
   */
  deliver(chunk: Buffer, borrowed: boolean): Delivered {
    if (this.output.destroyed) return false;
    if (!this.started) return new Promise<void>((resolve) => (this.held = { chunk, borrowed, resolve }));
    for (const tap of this.taps) tap(chunk);
    if (!this.consumer) return this.output.push(borrowed ? Buffer.from(chunk) : chunk);
    let wait;
    try {
      wait = this.consumer(chunk);
    } catch (err) {
      this.fail(err as Error);
      return false;
    }
    if (!wait) return true;
    const pending: Promise<void> = wait.then(
      () => {
        if (this.pending === pending) this.pending = undefined;
      },
      (err: Error) => {
        this.pending = undefined;
        this.fail(err);
      },
    );
    this.pending = pending;
    return pending;
  }

  close(): void {
    if (this.output.destroyed) return;
    if (!this.started) return void (this.closing = true); // after what is held, once a reader comes
    if (!this.finished) return void this.output.push(null);
    // the consumer may still be at work on the last chunk: the end only after that
    const finished = this.finished;
    const end = () => {
      if (this.output.destroyed) return;
      this.ended = true;
      this.output.destroy(); // (nothing was pushed: there is no Readable end to wait for)
      finished.resolve();
    };
    if (this.pending) void this.pending.then(end);
    else end();
  }

  fail(err: Error): void {
    if (this.output.destroyed) return;
    this.output.destroy(err);
    this.finished?.reject(err);
  }
}
