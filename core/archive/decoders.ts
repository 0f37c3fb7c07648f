/**
 * Decoders a writer pushes compressed bytes into, chunk by chunk, and whose decoded bytes come
 * out of one Readable (`output`) made up front: a decompressing command (`unpigz`, `xz`,
 * `bzip2` with `-d -c`), a zlib stream, or nothing at all (plain). A download feeds one as its
 * chunks arrive, with no stream stages in between: each stage a chunk goes through costs the
 * daemon's event loop a few microseconds, thousands of times per layer.
 */
import { spawn } from "node:child_process";
import { basename } from "node:path";
import { Readable, type Writable } from "node:stream";

/** What a writer sees of a decoder. */
export interface Decoder {
  /** Takes a chunk; returns a promise when the writer should wait before the next (backpressure). */
  write(chunk: Buffer): Promise<void> | undefined;
  /** No more input: the output ends once the rest is decoded (or fails, if it is not whole). */
  end(): void;
  /** Stops decoding: the output fails with `err` (a command is killed). */
  fail(err: Error): void;
  /** The decoded bytes; destroying it stops the decoder too. */
  readonly output: Readable;
}

/** The decoding half a decoder plugs into its output (see `Outlet`). */
export interface Source {
  write(chunk: Buffer): Promise<void> | undefined;
  end(): void;
  /** The output was read from: let the source push again. */
  resume(): void;
  /** The output was destroyed: release what the source holds (kill a command). */
  stop(): void;
}

/** Output chunks are up to 1 MiB before the reader is asked to catch up. */
const OUTPUT_BUFFER = 1 << 20;

/**
 * The output Readable, made before its source is known (the format is told by the first bytes),
 * and the source plugged in later.
 */
export class Outlet {
  private source: Source | undefined;
  readonly output: Readable;

  constructor() {
    this.output = new Readable({
      highWaterMark: OUTPUT_BUFFER,
      read: () => this.source?.resume(),
      destroy: (err, cb) => {
        this.source?.stop();
        cb(err);
      },
    });
  }

  plug(source: Source): Source {
    this.source = source;
    return source;
  }

  /** Hands a decoded chunk on; false when the reader has enough for now (the source pauses). */
  push(chunk: Buffer): boolean {
    return this.output.destroyed ? false : this.output.push(chunk);
  }

  close(): void {
    if (!this.output.destroyed) this.output.push(null);
  }

  fail(err: Error): void {
    this.output.destroy(err);
  }
}

/** Resolves once `stream` drains, or closes (a stream that is gone will never drain). */
export function drained(stream: Writable | Readable): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off("drain", done);
      stream.off("close", done);
      resolve();
    };
    stream.on("drain", done);
    stream.on("close", done);
  });
}

/** No decoding: what is written comes out as it is. */
export function plainSource(outlet: Outlet): Source {
  let waiting: (() => void) | undefined;
  const wake = () => {
    const w = waiting;
    waiting = undefined;
    w?.();
  };
  outlet.output.on("close", wake);
  return {
    write: (chunk) => (outlet.push(chunk) || outlet.output.destroyed ? undefined : new Promise<void>((resolve) => (waiting = resolve))),
    end: () => outlet.close(),
    resume: wake,
    stop: wake,
  };
}

/** Through a zlib (or any Duplex) decoder in this process. */
export function streamSource(outlet: Outlet, decoder: NodeJS.ReadWriteStream & Readable & Writable): Source {
  decoder.on("data", (chunk: Buffer) => {
    if (!outlet.push(chunk)) decoder.pause();
  });
  decoder.on("end", () => outlet.close());
  decoder.on("error", (err) => outlet.fail(err));
  return {
    write: (chunk) => (decoder.write(chunk) || decoder.destroyed ? undefined : drained(decoder)),
    end: () => decoder.end(),
    resume: () => decoder.resume(),
    stop: () => decoder.destroy(),
  };
}

/**
 * Through a decompressing command (`unpigz -d -c`, `xz -d -c`, ...). An exit status other than
 * those in `ok` fails the output with the command's message; a command that cannot start fails
 * it with the reason; the command is killed when the output is destroyed.
 */
export function commandSource(outlet: Outlet, command: string, args: string[], ok: number[] = [0]): Source {
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => {
    if (stderr.length < 4096) stderr += d.toString();
  });
  // EPIPE when the command exits before it has read everything: its exit status says why
  child.stdin.on("error", () => undefined);
  child.stdout.on("data", (chunk: Buffer) => {
    if (!outlet.push(chunk)) child.stdout.pause();
  });
  let outputEnded = false;
  let status: number | null | undefined;
  const settle = () => {
    if (!outputEnded || status === undefined) return;
    if (status !== null && ok.includes(status)) outlet.close();
    else outlet.fail(new Error(`${basename(command)} failed (exit ${status}): ${stderr.trim() || "no message"}`));
  };
  child.stdout.on("end", () => {
    outputEnded = true;
    settle();
  });
  child.once("error", (err) => outlet.fail(err));
  child.once("close", (code) => {
    status = code;
    outputEnded = true; // its output is closed too by now
    settle();
  });
  return {
    write: (chunk) => (child.stdin.write(chunk) || child.stdin.destroyed ? undefined : drained(child.stdin)),
    end: () => child.stdin.end(),
    resume: () => child.stdout.resume(),
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}
