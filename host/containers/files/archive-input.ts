/**
 * The body of `PUT /containers/{id}/archive`: a tar, plain or compressed with any of the
 * algorithms Docker's reference lists (gzip, bzip2, xz; zstd too), told apart by its magic bytes.
 * gzip, zstd and plain go through core/archive's `decompress`; bzip2 and xz through the system's
 * `bzip2 -dc` / `xz -dc`, as Docker itself uses xz's command.
 */
import { spawn } from "node:child_process";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { decompress } from "../../../core/archive/index.js";
import { peek } from "../../../core/archive/decompress.js";

const BZIP2 = [0x42, 0x5a, 0x68];
const XZ = [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00];

function startsWith(buf: Buffer, magic: number[]): boolean {
  return buf.length >= magic.length && magic.every((b, i) => buf[i] === b);
}

/** The uncompressed tar of `body`; errors (a corrupt stream, a failed tool) come out as stream errors. */
export function archiveInput(body: Readable, opts: { disablePigz?: boolean } = {}): Readable {
  return Readable.from(uncompressed(body, opts), { objectMode: false });
}

async function* uncompressed(body: Readable, opts: { disablePigz?: boolean }): AsyncGenerator<Buffer> {
  const it = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const { first, all } = await peek(it, XZ.length);
  if (startsWith(first, BZIP2)) yield* throughTool("bzip2", all());
  else if (startsWith(first, XZ)) yield* throughTool("xz", all());
  else yield* decompress(Readable.from(all(), { objectMode: false }), opts);
}

async function* throughTool(tool: string, source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const child = spawn(tool, ["-d", "-c"], { stdio: ["pipe", "pipe", "pipe"] });
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
    yield* child.stdout;
    const code = await exited;
    await feeding;
    if (code !== 0) throw new Error(`${tool} failed (exit ${code}): ${stderr.trim() || "no message"}`);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
}
