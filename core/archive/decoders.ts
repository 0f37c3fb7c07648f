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
  /**
   * The input will most likely be `kind` (a layer's media type says): what decoding it takes
   * is started now (`unpigz` for gzip: a socket pair and a process, tens of ms) rather than at
   * the first bytes. The magic bytes still decide; what they do not call for is dropped.
   */
  expect?(kind: "gzip" | "zstd" | "plain"): void;
}

/** Resolves once `stream` drains, or closes (a stream that is gone will never drain). */
function drained(stream: Writable | Readable): Promise<void> {
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
 * Bytes a command's stdin may have queued before its writer waits. A pipe holds 64 KiB and
 * Node's stream asks for a wait past 16 KiB, so a download's 64 KiB chunks went in one at a
 * time, each after the command had taken the one before and the event loop had come round to
 * the next; queued, they are written by libuv as the pipe empties, while the download goes on.
 */
const STDIN_QUEUE = 1024 * 1024;

/**
 * A decompressing command started before its input is known to need it: bound to the outlet
 * its output goes to, or dropped (killed) unused. Starting one takes a socket pair and a
 * process (tens of ms, most of it the event loop's), which a download can spend waiting for
 * the registry's answer rather than after its first bytes.
 */
export interface StartedCommand {
  bind(outlet: Outlet): Source;
  drop(): void;
  /** It has neither ended nor failed (yet). */
  running(): boolean;
}

/**
 * Through a decompressing command (`unpigz -d -c`, `xz -d -c`, ...). Its output is read into
 * one buffer, again and again (socket-pair.ts), and handed on borrowed (outlet.ts). An exit
 * status other than those in `ok` fails the output with the command's message; a command that
 * cannot start fails it with the reason; the command is killed when the output is destroyed.
 */
export async function commandSource(outlet: Outlet, command: string, args: string[], ok: number[] = [0]): Promise<Source> {
  return (await startCommand(command, args, ok)).bind(outlet);
}

/** `commandSource`'s command, started now, its outlet given later (`bind`). */
export async function startCommand(command: string, args: string[], ok: number[] = [0]): Promise<StartedCommand> {
  let outlet: Outlet | undefined;
  let paused = false;
  const onread = {
    buffer: Buffer.allocUnsafe(READ_BUFFER),
    callback(n: number, buffer: Buffer) {
      // (output comes only once input has gone in, through the Source bind() gave)
      const delivered = outlet!.deliver(buffer.subarray(0, n), true);
      if (delivered === true) return true;
      paused = true;
      if (delivered !== false) delivered.then(resume, () => undefined);
      return false; // Node stops reading until ours.resume()
    },
  };
  const { ours, theirs } = await socketPair(onread);
  const resume = () => {
    if (!paused) return;
    paused = false;
    ours.resume();
  };
  ours.resume(); // flowing, so that its end is told (the data itself comes through `callback`)
  // what happens before the outlet is bound is told to it when it is
  let failure: Error | undefined;
  let outputEnded = false;
  let status: number | null | undefined;
  let stderr = "";
  let settled = false;
  const settle = () => {
    if (!outlet || settled) return;
    if (failure) {
      settled = true;
      return outlet.fail(failure);
    }
    if (!outputEnded || status === undefined) return;
    settled = true;
    if (status !== null && ok.includes(status)) outlet.close();
    // An exit status (not a signal) is the command's verdict on the data: marked for callers
    // that answer a client's corrupt stream with a 400.
    else outlet.fail(Object.assign(new Error(`${basename(command)} failed (exit ${status}): ${stderr.trim() || "no message"}`), status === null ? {} : { code: "ERR_DECOMPRESS_DATA" }));
  };
  const failed = (err: Error) => {
    failure ??= err;
    settle();
  };
  ours.on("end", () => {
    outputEnded = true;
    settle();
  });
  ours.on("error", failed);
  let child;
  try {
    child = spawn(command, args, { stdio: ["pipe", theirs, "pipe"] });
  } finally {
    theirs.destroy(); // the child has its own copy
  }
  child.stderr.on("data", (d: Buffer) => {
    if (stderr.length < 4096) stderr += d.toString();
  });
  child.once("error", failed);
  child.once("close", (code) => {
    status = code;
    settle();
  });
  const stdin = child.stdin;
  // EPIPE when the command exits before it has read everything: its exit status says why
  stdin.on("error", () => undefined);
  const stop = () => {
    ours.destroy();
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  };
  return {
    bind(to) {
      outlet = to;
      settle();
      return {
        write: (chunk) => {
          stdin.write(chunk);
          return stdin.destroyed || stdin.writableLength < STDIN_QUEUE ? undefined : drained(stdin);
        },
        end: () => stdin.end(),
        resume,
        stop,
      };
    },
    drop: stop,
    running: () => failure === undefined && status === undefined && !outputEnded && child.exitCode === null && child.signalCode === null,
  };
}
