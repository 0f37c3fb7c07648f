/**
 * A context that arrives as a stream (stdin, a URL): the Docker CLI looks at its first 1024
 * bytes to tell an archive (a tar, or gzip, bzip2, xz or zstd magic) from a Dockerfile alone;
 * a Dockerfile alone is sent as a tar holding just `Dockerfile`. A Dockerfile given apart
 * (`-f -`) is added to an archive context by rewriting the tar as it streams.
 */
import { Readable } from "node:stream";
import { extract as tarExtract, pack as tarPack } from "tar-stream";
import { peek } from "../../core/archive/decompress.js";
import { appendExtra, ignoreWithExtra, writeBuffer, type ExtraDockerfile } from "./context-pack.js";

const PEEK = 1024;
const MAGIC = [
  [0x42, 0x5a, 0x68], // bzip2
  [0x1f, 0x8b, 0x08], // gzip
  [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], // xz
  [0x28, 0xb5, 0x2f, 0xfd], // zstd
];

/** The stream's first `PEEK` bytes (fewer if it is shorter), and the whole stream again. */
export async function peekStream(input: Readable): Promise<{ head: Buffer; stream: Readable }> {
  const { first, all } = await peek(input[Symbol.asyncIterator]() as AsyncIterator<Buffer>, PEEK);
  return { head: first.subarray(0, PEEK), stream: Readable.from(all(), { objectMode: false }) };
}

/** Whether the first bytes are a compressed stream's or a valid tar header's (its checksum right). */
export function isArchive(head: Buffer): boolean {
  if (MAGIC.some((m) => m.every((byte, i) => head[i] === byte))) return true;
  if (head.length < 512) return false;
  const block = head.subarray(0, 512);
  if (block.every((b) => b === 0)) return false;
  const field = block.toString("latin1", 148, 156).replace(/[\0 ]+/g, " ").trim();
  if (!/^[0-7]+$/.test(field)) return false;
  // the sum of the header's bytes with the checksum field as spaces, unsigned or (old tars) signed
  let unsigned = 0;
  let signed = 0;
  for (let i = 0; i < 512; i++) {
    const b = i >= 148 && i < 156 ? 0x20 : block[i];
    unsigned += b;
    signed += b > 127 ? b - 256 : b;
  }
  const sum = parseInt(field, 8);
  return sum === unsigned || sum === signed;
}

/** A tar holding the Dockerfile alone, as the CLI tars its temporary folder (the user's ids, 0644, now). */
export function dockerfileTar(content: Buffer): Readable {
  const pack = tarPack();
  const h = { name: "Dockerfile", type: "file" as const, mode: 0o644, uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0, uname: "", gname: "", mtime: new Date(Math.floor(Date.now() / 1000) * 1000), size: content.length };
  writeBuffer(pack, h, content).then(
    () => pack.finalize(),
    (e: Error) => pack.destroy(e),
  );
  return Readable.from(pack, { objectMode: false });
}

/** An uncompressed tar context with `extra` added (see context-pack.ts): `.dockerignore` rewritten or added, the Dockerfile appended. */
export function addDockerfileToTar(tar: Readable, extra: ExtraDockerfile): Readable {
  const extract = tarExtract();
  const pack = tarPack();
  let ignoreSeen = false;
  extract.on("entry", (header, body, next) => {
    if (header.name !== ".dockerignore") {
      body.pipe(pack.entry(header, (err) => (err ? extract.destroy(err) : next())));
      return;
    }
    ignoreSeen = true;
    const parts: Buffer[] = [];
    body.on("data", (c) => void parts.push(c as Buffer));
    body.on("end", () => {
      const text = ignoreWithExtra(Buffer.concat(parts), extra.name);
      writeBuffer(pack, { ...header, pax: header.pax as Record<string, string> | undefined, size: text.length }, text).then(() => next(), (e: Error) => extract.destroy(e));
    });
  });
  extract.on("finish", () => {
    appendExtra(pack, extra, ignoreSeen).then(
      () => pack.finalize(),
      (e: Error) => pack.destroy(e),
    );
  });
  extract.on("error", (e) => pack.destroy(e));
  tar.on("error", (e) => extract.destroy(e));
  tar.pipe(extract);
  return Readable.from(pack, { objectMode: false });
}
