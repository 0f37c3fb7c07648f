/**
 * Layer blobs arrive gzip- or zstd-compressed or plain, and the media type is not always to be
 * trusted (Docker's own `docker save` tars hold uncompressed layers under gzip names), so the
 * format is told by its magic bytes. gzip goes through `unpigz` when it is installed (it
 * decompresses on another core and is much faster than zlib) unless the daemon's `disable-pigz`
 * option (ENGINE_DISABLE_PIGZ) says not to; zstd through Node's own zlib.
 */
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { basename, delimiter, join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip, createZstdDecompress } from "node:zlib";
import { chunksOf } from "./chunks.js";

export interface DecompressOptions {
  /** Use zlib even when `unpigz` is installed. Defaults to ENGINE_DISABLE_PIGZ being set and non-empty. */
  disablePigz?: boolean;
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

let unpigzPath: string | null | undefined;

/** Where `unpigz` is on PATH, or null; looked up once. */
export function findUnpigz(): string | null {
  if (unpigzPath !== undefined) return unpigzPath;
  unpigzPath = null;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, "unpigz"), constants.X_OK);
      unpigzPath = join(dir, "unpigz");
      break;
    } catch {
      // not here
    }
  }
  return unpigzPath;
}

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
 * The decompressed form of `input`. Errors of the input, of the data (a corrupt stream) and of
 * `unpigz` come out as errors of the returned stream; destroying it destroys the input.
 */
export function decompress(input: Readable, opts: DecompressOptions = {}): Readable {
  const disablePigz = opts.disablePigz ?? (process.env.ENGINE_DISABLE_PIGZ ?? "") !== "";
  return Readable.from(decompressed(input, disablePigz), { objectMode: false });
}

async function* decompressed(input: Readable, disablePigz: boolean): AsyncGenerator<Buffer> {
  const it = chunksOf(input);
  try {
    const { first, all } = await peek(it, 4);
    const kind = sniffCompression(first);
    if (kind === "plain") yield* all();
    else if (kind === "zstd") yield* throughZlib(all(), createZstdDecompress({ chunkSize: CHUNK }));
    else {
      const unpigz = disablePigz ? null : findUnpigz();
      // unpigz's 64 KiB pipe reads go to the tar reader as they are: joining them into larger
      // chunks cost more (a copy of every byte, and the garbage collections the copies bring)
      // than the reader saves (measured: a 200 MB pull 3.6 CPU s joined, 3.1 not; a 165 MB
      // tree of small files extracts as fast or faster)
      if (unpigz) yield* throughUnpigz(all(), unpigz);
      else yield* throughZlib(all(), createGunzip({ chunkSize: CHUNK }));
    }
  } finally {
    await it.return(undefined); // destroys the input when we stop early; a no-op once it has ended
  }
}

async function* throughZlib(source: AsyncIterable<Buffer>, decoder: NodeJS.ReadWriteStream & Readable): AsyncGenerator<Buffer> {
  const feeding = pipeline(source, decoder);
  feeding.catch(() => {}); // awaited below; this only keeps an early rejection from being "unhandled"
  try {
    yield* chunksOf(decoder);
    await feeding;
  } finally {
    decoder.destroy();
  }
}

function throughUnpigz(source: AsyncIterable<Buffer>, unpigz: string): AsyncGenerator<Buffer> {
  // one thread: pigz decompresses in one anyway, and its helper threads (read, write, check)
  // only contend with the daemon for the cores (measured: half the time with -p 1 on 2 cores)
  // 2 is pigz's "warning" status (trailing junk after the last member), which zlib ignores too
  return throughCommand(unpigz, ["-d", "-c", "-p", "1"], source, [0, 2]);
}

/**
 * `source` through a decompressing command (`unpigz`, `xz`, `bzip2` with `-d -c`): its output
 * as it comes. An exit status other than `ok` is an error with the command's message (a
 * failed input explains it better, and is thrown first); the command is killed when the
 * reader stops early.
 */
export async function* throughCommand(command: string, args: string[], source: AsyncIterable<Buffer>, ok: number[] = [0]): AsyncGenerator<Buffer> {
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((res, rej) => {
    child.once("error", rej);
    child.once("close", (code) => res(code));
  });
  exited.catch(() => {});
  const feeding = pipeline(source, child.stdin);
  feeding.catch(() => {});
  try {
    yield* chunksOf(child.stdout);
    const code = await exited;
    await feeding;
    if (code === null || !ok.includes(code)) throw new Error(`${basename(command)} failed (exit ${code}): ${stderr.trim() || "no message"}`);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
}
