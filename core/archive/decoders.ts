/**
 * Decoders a writer pushes compressed bytes into, chunk by chunk, and whose decoded bytes come
 * out of an `Outlet` (outlet.ts) made up front: a decompressing command (`unpigz`, `xz`,
 * `bzip2` with `-d -c`), a zlib stream, or nothing at all (plain). A download feeds one as its
 * chunks arrive, with no stream stages in between: each stage a chunk goes through costs the
 * daemon's event loop a few microseconds, thousands of times per layer.
 */
import { spawn } from "node:child_process";
import { basename } from "node:path";
import type { Readable, Writable } from "node:stream";
import { Outlet, type Delivered, type Source } from "./outlet.js";
import { socketPair } from "./socket-pair.js";

export { Outlet, type Source } from "./outlet.js";

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
    write(chunk) {
      const delivered = outlet.deliver(chunk, false);
      if (delivered === true || outlet.output.destroyed) return undefined;
      if (delivered === false) return new Promise<void>((resolve) => (waiting = resolve));
      return delivered.then(() => undefined, () => undefined);
    },
    end: () => outlet.close(),
    resume: wake,
    stop: wake,
  };
}

/** Pauses `pausable` for what `delivered` says: until `resume()` (false) or the promise. */
function obey(delivered: Delivered, pausable: { pause(): unknown; resume(): unknown }): void {
  if (delivered === true) return;
  pausable.pause();
  if (delivered !== false) delivered.then(() => pausable.resume(), () => undefined);
}

/** Through a zlib (or any Duplex) decoder in this process. */
export function streamSource(outlet: Outlet, decoder: NodeJS.ReadWriteStream & Readable & Writable): Source {
  decoder.on("data", (chunk: Buffer) => obey(outlet.deliver(chunk, false), decoder));
  decoder.on("end", () => outlet.close());
  decoder.on("error", (err) => outlet.fail(err));
  return {
    write: (chunk) => (decoder.write(chunk) || decoder.destroyed ? undefined : drained(decoder)),
    end: () => decoder.end(),
    resume: () => decoder.resume(),
    stop: () => decoder.destroy(),
  };
}

/** Bytes a command's output is read into, one buffer per command, over and over. */
const READ_BUFFER = 256 * 1024;

/**
 * Through a decompressing command (`unpigz -d -c`, `xz -d -c`, ...). Its output is read into
 * one buffer, again and again (socket-pair.ts), and handed on borrowed (outlet.ts). An exit
 * status other than those in `ok` fails the output with the command's message; a command that
 * cannot start fails it with the reason; the command is killed when the output is destroyed.
 */
export async function commandSource(outlet: Outlet, command: string, args: string[], ok: number[] = [0]): Promise<Source> {
  let paused = false;
  const { ours, theirs } = await socketPair({
    buffer: Buffer.allocUnsafe(READ_BUFFER),
    callback(n, buffer) {
      const delivered = outlet.deliver(buffer.subarray(0, n), true);
      if (delivered === true) return true;
      paused = true;
      if (delivered !== false) delivered.then(resume, () => undefined);
      return false; // Node stops reading until ours.resume()
    },
  });
  const resume = () => {
    if (!paused) return;
    paused = false;
    ours.resume();
  };
  ours.resume(); // flowing, so that its end is told (the data itself comes through `callback`)
  let child;
  try {
    child = spawn(command, args, { stdio: ["pipe", theirs, "pipe"] });
  } finally {
    theirs.destroy(); // the child has its own copy
  }
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => {
    if (stderr.length < 4096) stderr += d.toString();
  });
  // EPIPE when the command exits before it has read everything: its exit status says why
  child.stdin.on("error", () => undefined);
  let outputEnded = false;
  let status: number | null | undefined;
  const settle = () => {
    if (!outputEnded || status === undefined) return;
    if (status !== null && ok.includes(status)) outlet.close();
    else outlet.fail(new Error(`${basename(command)} failed (exit ${status}): ${stderr.trim() || "no message"}`));
  };
  ours.on("end", () => {
    outputEnded = true;
    settle();
  });
  ours.on("error", (err) => outlet.fail(err));
  child.once("error", (err) => outlet.fail(err));
  child.once("close", (code) => {
    status = code;
    settle();
  });
  const stdin = child.stdin;
  return {
    write: (chunk) => (stdin.write(chunk) || stdin.destroyed ? undefined : drained(stdin)),
    end: () => stdin.end(),
    resume,
    stop: () => {
      ours.destroy();
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}
