/**
 * The body of `PUT /containers/{id}/archive`: a tar, plain or compressed with any of the
 * algorithms Docker's reference lists (gzip, bzip2, xz; zstd too), told apart by its magic bytes.
 * gzip, zstd and plain go through core/archive's `decompress`; bzip2 and xz through the system's
 * `bzip2 -dc` / `xz -dc`, as Docker itself uses xz's command.
 */
import { Readable } from "node:stream";
import { decompress } from "../../../core/archive/index.js";
import { peek, throughCommand } from "../../../core/archive/decompress.js";

const BZIP2 = [0x42, 0x5a, 0x68];
const XZ = [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00];

function startsWith(buf: Buffer, magic: number[]): boolean {
  return buf.length >= magic.length && magic.every((b, i) => buf[i] === b);
}

/** The uncompressed tar of `body`; errors (a corrupt stream, a failed tool) come out as stream errors. */
export function archiveInput(body: Readable, opts: { disablePigz: boolean }): Readable {
  return Readable.from(uncompressed(body, opts), { objectMode: false });
}

async function* uncompressed(body: Readable, opts: { disablePigz: boolean }): AsyncGenerator<Buffer> {
  const it = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const { first, all } = await peek(it, XZ.length);
  if (startsWith(first, BZIP2)) yield* throughCommand("bzip2", ["-d", "-c"], all());
  else if (startsWith(first, XZ)) yield* throughCommand("xz", ["-d", "-c"], all());
  else yield* decompress(Readable.from(all(), { objectMode: false }), opts);
}
