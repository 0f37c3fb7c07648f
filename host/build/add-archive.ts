/**
 * `ADD` of a local archive: a tar, plain or compressed (gzip, bzip2, xz, zstd), is unpacked at
 * the destination instead of copied, as Docker's `archive.IsArchivePath` decides: the file's
 * (decompressed) first block must be a tar header with a good checksum. Anything else is copied
 * as a file.
 */
import { spawn } from "node:child_process";
import { createReadStream, openSync, readSync, closeSync } from "node:fs";
import type { Readable } from "node:stream";

type Kind = "gzip" | "bzip2" | "xz" | "zstd" | "plain";

const DECODERS: Record<Exclude<Kind, "plain">, [string, string[]]> = {
  gzip: ["gzip", ["-dc"]],
  bzip2: ["bzip2", ["-dc"]],
  xz: ["xz", ["-dc"]],
  zstd: ["zstd", ["-dcq"]],
};

function kindOf(head: Buffer): Kind {
  if (head[0] === 0x1f && head[1] === 0x8b) return "gzip";
  if (head.subarray(0, 3).toString("latin1") === "BZh") return "bzip2";
  if (head.subarray(0, 6).equals(Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]))) return "xz";
  if (head.subarray(0, 4).equals(Buffer.from([0x28, 0xb5, 0x2f, 0xfd]))) return "zstd";
  return "plain";
}

/** A tar header block: its checksum (bytes 148-155, octal) matches its bytes with the field as spaces. */
function isTarHeader(block: Buffer): boolean {
  if (block.length < 512) return false;
  const field = block.subarray(148, 156).toString("latin1").replace(/\0.*$/s, "").trim();
  if (!/^[0-7]+$/.test(field)) return false;
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i];
  return sum === parseInt(field, 8);
}

function decoded(path: string, kind: Kind): Readable {
  if (kind === "plain") return createReadStream(path);
  const [cmd, args] = DECODERS[kind];
  const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "ignore"] });
  const input = createReadStream(path);
  input.pipe(child.stdin);
  child.stdin.on("error", () => {}); // the reader may stop early
  child.stdout.once("close", () => {
    input.destroy();
    if (child.exitCode === null) child.kill();
  });
  return child.stdout;
}

async function firstBlock(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    chunks.push(chunk as Buffer);
    size += (chunk as Buffer).length;
    if (size >= 512) break;
  }
  stream.destroy();
  return Buffer.concat(chunks).subarray(0, 512);
}

/** The archive's tar stream when `path` is an archive ADD unpacks; undefined for any other file. */
export async function archiveStream(path: string): Promise<Readable | undefined> {
  const head = Buffer.alloc(512);
  const fd = openSync(path, "r");
  let n: number;
  try {
    n = readSync(fd, head, 0, 512, 0);
  } finally {
    closeSync(fd);
  }
  const kind = kindOf(head.subarray(0, n));
  const block = kind === "plain" ? head.subarray(0, n) : await firstBlock(decoded(path, kind)).catch(() => Buffer.alloc(0));
  if (!isTarHeader(block)) return undefined;
  return decoded(path, kind);
}
