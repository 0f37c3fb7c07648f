/**
 * Layer blobs arrive gzip- or zstd-compressed or plain, and the media type is not always to be
 * trusted (Docker's own `docker save` tars hold uncompressed layers under gzip names), so the
 * format is told by its magic bytes. gzip goes through `unpigz` when it is installed (it
 * decompresses on another core and is much faster than zlib) unless the daemon's `disable-pigz`
 * option (ENGINE_DISABLE_PIGZ) says not to; zstd through Node's own zlib.
 */
import type { Readable } from "node:stream";
import { createGunzip, createZstdDecompress } from "node:zlib";
import { chunksOf } from "./chunks.js";
import { commandSource, Outlet, plainSource, streamSource, type Decoder, type Source, type StartedCommand } from "./decoders.js";
import { findUnpigz, startUnpigz, unpigzSpares } from "./unpigz.js";

export { findUnpigz } from "./unpigz.js";

export type { Decoder } from "./decoders.js";

export interface DecompressOptions {
  /**
   * Use zlib even when `unpigz` is installed: the daemon's `disable-pigz` option
   * (ENGINE_DISABLE_PIGZ), passed down by the caller; core reads no environment.
   */
  disablePigz: boolean;
}

export type Compression = "gzip" | "zstd" | "plain";

/** The format of a stream that starts with `head` (at least 4 bytes unless the stream is shorter). */
export function sniffCompression(head: Uint8Array): Compression {
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return "gzip";
  if (head.length >= 4 && head[0] === 0x28 && head[1] === 0xb5 && head[2] === 0x2f && head[3] === 0xfd) return "zstd";
  return "plain";
}

/** Output chunks of 1 MiB rather than zlib's 16 KiB: the tar reader's cost is per chunk. */
const CHUNK = 1024 * 1024;

/**
 * The first `n` bytes of a stream (fewer when it is shorter), to tell its format by its magic
 * bytes, and the whole stream again from its start (`all`, to be read once).
 */
export async function peek(it: AsyncIterator<Buffer>, n: number): Promise<{ first: Buffer; all: () => AsyncGenerator<Buffer> }> {
  const head: Buffer[] = [];
  let have = 0;
  let ended = false;
  while (have < n) {
    const next = await it.next();
    if (next.done) {
      ended = true;
      break;
    }
    head.push(next.value);
    have += next.value.length;
  }
  const first = Buffer.concat(head);
  const all = async function* (): AsyncGenerator<Buffer> {
    if (first.length > 0) yield first;
    while (!ended) {
      const next = await it.next();
      if (next.done) return;
      yield next.value;
    }
  };
  return { first, all };
}

/**
 * A decompressor to push a compressed stream into as it arrives (a download): the format is
 * told by the first 4 bytes, then the bytes go to `unpigz` (gzip, when installed and not
 * disabled), Node's zlib (gzip otherwise, zstd), or straight through (plain). Errors of the
 * data (a corrupt stream) and of `unpigz` come out as errors of `output`, as does the error
 * `fail` is given (the input's, which explains best); destroying `output` stops it all.
 */
export function createDecompressor(opts: DecompressOptions): Decoder {
  const disablePigz = opts.disablePigz;
  const outlet = new Outlet();
  const head: Buffer[] = [];
  let headLength = 0;
  let source: Source | undefined;
  /** The source being made (a command's takes a socket pair first): writes wait for it. */
  let making: Promise<Source> | undefined;
  const unpigz = disablePigz ? null : findUnpigz();
  /** While this decoder runs `unpigz`, the daemon's spares are not refilled (unpigz.ts). */
  let idle: (() => void) | undefined;
  /** `unpigz` for this decoder: one of the daemon's spares, or started now. */
  const unpigzNow = (): Promise<StartedCommand> => {
    idle ??= unpigzSpares.busy();
    const spare = unpigzSpares.take();
    return spare ? Promise.resolve(spare) : startUnpigz(unpigz!);
  };
  /** `unpigz` started ahead (`expect("gzip")`), until it is bound or dropped. */
  let spare: Promise<StartedCommand> | undefined;
  const dropSpare = () => {
    void spare?.then((s) => s.drop(), () => undefined);
    spare = undefined;
  };
  outlet.output.once("close", () => {
    dropSpare(); // never used: the output went first
    idle?.();
  });
  const choose = (): Source | Promise<Source> => {
    const kind = sniffCompression(head.length === 1 ? head[0] : Buffer.concat(head));
    const started = kind === "gzip" ? spare : undefined;
    if (!started) dropSpare();
    spare = undefined; // (bound below: the outlet stops it from now on)
    if (kind === "plain") return outlet.plug(plainSource(outlet));
    if (kind === "zstd") return outlet.plug(streamSource(outlet, createZstdDecompress({ chunkSize: CHUNK })));
    if (!unpigz) return outlet.plug(streamSource(outlet, createGunzip({ chunkSize: CHUNK })));
    return (started ?? unpigzNow()).then((command) => outlet.plug(command.bind(outlet)));
  };
  /** The source, then `then` with it (at once when it is made). */
  const withSource = (then: (s: Source) => Promise<void> | undefined | void): Promise<void> | undefined => {
    if (source) return then(source) ?? undefined;
    if (!making) {
      const chosen = choose();
      if (!(chosen instanceof Promise)) {
        source = chosen;
        return then(chosen) ?? undefined;
      }
      making = chosen.then((made) => (source = made));
    }
    return making.then(
      (made) => then(made) ?? undefined,
      (err: Error) => outlet.fail(err),
    );
  };
  const headBytes = () => (head.length === 1 ? head[0] : Buffer.concat(head));
  return {
    output: outlet.output,
    write(chunk) {
      if (outlet.output.destroyed) return undefined;
      if (source) return source.write(chunk);
      if (making) return withSource((s) => s.write(chunk));
      head.push(chunk);
      headLength += chunk.length;
      if (headLength < 4) return undefined;
      return withSource((s) => s.write(headBytes()));
    },
    end() {
      if (outlet.output.destroyed) return;
      if (source || making) return void withSource((s) => s.end());
      // shorter than the magic bytes: told by what there is (plain, or a truncated stream)
      void withSource((s) => {
        if (headLength > 0) void s.write(headBytes());
        s.end();
      });
    },
    fail: (err) => outlet.fail(err),
    expect(kind) {
      if (kind !== "gzip" || !unpigz || spare || source || making || outlet.output.destroyed) return;
      spare = unpigzNow();
      spare.catch(() => undefined); // (its failure is told when it is used)
    },
  };
}

/**
 * The decompressed form of `input` (see `createDecompressor`). Errors of the input come out as
 * errors of the returned stream; destroying it destroys the input.
 */
export function decompress(input: Readable, opts: DecompressOptions): Readable {
  const decoder = createDecompressor(opts);
  pump(input, decoder);
  decoder.output.once("close", () => {
    if (!input.readableEnded) input.destroy();
  });
  return decoder.output;
}

/** Writes all of `input` into `decoder`, with its backpressure, and ends it (or fails it). */
export async function pump(input: AsyncIterable<Buffer> | Readable, decoder: Decoder): Promise<void> {
  try {
    for await (const chunk of isReadable(input) ? chunksOf(input) : input) {
      if (decoder.output.destroyed) return; // its reader is gone: so is the input (the loop's end destroys it)
      const wait = decoder.write(chunk);
      if (wait) await wait;
    }
    decoder.end();
  } catch (err) {
    decoder.fail(err as Error);
  }
}

const isReadable = (x: AsyncIterable<Buffer> | Readable): x is Readable => typeof (x as Readable).pipe === "function";

/**
 * `source` through a decompressing command (`xz`, `bzip2` with `-d -c`): its output as it
 * comes. An exit status other than `ok` is an error with the command's message (a failed
 * input explains it better, and is thrown first); the command is killed when the reader stops
 * early.
 */
export async function* throughCommand(command: string, args: string[], source: AsyncIterable<Buffer>, ok: number[] = [0]): AsyncGenerator<Buffer> {
  const outlet = new Outlet();
  let running: Source;
  try {
    running = outlet.plug(await commandSource(outlet, command, args, ok));
  } catch (err) {
    outlet.fail(err as Error);
    throw err;
  }
  void pump(source, { write: (chunk) => running.write(chunk), end: () => running.end(), fail: (err) => outlet.fail(err), output: outlet.output });
  yield* chunksOf(outlet.output);
}
