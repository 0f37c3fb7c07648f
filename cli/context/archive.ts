/**
 * A context as the Docker CLI exports it (store.Export) and imports it (store.Import): a tar of
 *   meta.json            0644, the metadata as meta.json holds it
 *   tls/                 0700
 *   tls/<endpoint>/      0700
 *   tls/<endpoint>/<f>   0600, each TLS file
 * written with Go's archive/tar header bytes (ustar, owner 0:0, time 0), so the bytes are the
 * CLI's; this one also ends as a tar should (the CLI's stops after the last file's data, without
 * the padding and end blocks: tar(1) then says "Unexpected EOF", and both readers here accept it).
 * Import reads a tar or, as the CLI does, a zip; only meta.json and tls/<endpoint>/<file> may be
 * in it, 10 MiB at most.
 */
import { inflateRawSync } from "node:zlib";
import type { TlsData } from "./store.js";

const BLOCK = 512;
const MAX_IMPORT = 10 << 20;

export interface ContextArchive {
  /** meta.json's bytes. */
  meta: Buffer;
  tls: TlsData;
}

export function exportArchive(archive: ContextArchive): Buffer {
  const parts: Buffer[] = [];
  const add = (name: string, mode: number, data?: Buffer) => {
    parts.push(tarHeader(name, mode, data ? data.length : 0, data ? "0" : "5"));
    if (data) parts.push(data, Buffer.alloc((BLOCK - (data.length % BLOCK)) % BLOCK));
  };
  add("meta.json", 0o644, archive.meta);
  add("tls", 0o700);
  for (const [endpoint, files] of Object.entries(archive.tls)) {
    add(`tls/${endpoint}`, 0o700);
    for (const [file, data] of Object.entries(files)) add(`tls/${endpoint}/${file}`, 0o600, data);
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(parts);
}

/** Go's ustar header: octal fields zero-padded and NUL-ended, the checksum as "%06o\0 ". */
function tarHeader(name: string, mode: number, size: number, type: "0" | "5"): Buffer {
  const h = Buffer.alloc(BLOCK);
  const octal = (offset: number, width: number, value: number) => h.write(`${value.toString(8).padStart(width - 1, "0")}\0`, offset, "latin1");
  h.write(name, 0, 100, "utf8");
  octal(100, 8, mode);
  octal(108, 8, 0);
  octal(116, 8, 0);
  octal(124, 12, size);
  octal(136, 12, 0);
  h.write(type, 156, "latin1");
  h.write("ustar\u000000", 257, "latin1");
  octal(329, 8, 0);
  octal(337, 8, 0);
  h.write(`${checksum(h).toString(8).padStart(6, "0")}\0 `, 148, "latin1");
  return h;
}

/** The sum of the header's bytes, its checksum field counted as spaces. */
function checksum(h: Buffer): number {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i];
  return sum;
}

/** An exported context (tar or zip) into its metadata and TLS files; throws with the CLI's messages. */
export function importArchive(data: Buffer): ContextArchive {
  if (data.length > MAX_IMPORT) throw new Error("read exceeds the defined limit");
  const files = data.subarray(0, 4).equals(Buffer.from("PK\x03\x04", "latin1")) ? zipFiles(data) : tarFiles(data);
  let meta: Buffer | undefined;
  const tls: TlsData = {};
  for (const [name, bytes] of files) {
    if (name !== "meta.json" && !name.startsWith("tls/")) throw new Error(`${name}: unexpected context file`);
    if (cleanPath(name) !== name) throw new Error(`${name}: unexpected path format`);
    if (name.includes("\\")) throw new Error(`${name}: unexpected '\\' in path`);
    if (name === "meta.json") {
      meta = bytes;
      continue;
    }
    // tls/<endpoint>/<file>, a file directly in the endpoint's folder
    const [endpoint, file, ...more] = name.slice(4).split("/");
    if (!file || more.length) throw new Error("archive format is invalid");
    (tls[endpoint] ??= {})[file] = bytes;
  }
  if (!meta) throw new Error("invalid context: no metadata found");
  return { meta, tls };
}

/** Go's path.Clean, for the check that a name is already clean. */
function cleanPath(p: string): string {
  const out: string[] = [];
  for (const part of p.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") out.pop();
    else out.push(part);
  }
  return (p.startsWith("/") ? "/" : "") + out.join("/") || ".";
}

/** The regular files of a tar, in order. A header whose checksum is wrong is refused as Go refuses it. */
function tarFiles(data: Buffer): [string, Buffer][] {
  const files: [string, Buffer][] = [];
  let at = 0;
  while (at + BLOCK <= data.length) {
    const h = data.subarray(at, at + BLOCK);
    if (h.every((b) => b === 0)) break;
    const field = (offset: number, width: number) => h.toString("latin1", offset, offset + width).replace(/\0[\s\S]*$/, "");
    const stored = parseInt(field(148, 8).trim() || "x", 8);
    if (stored !== checksum(h)) throw new Error("archive/tar: invalid tar header");
    const size = parseInt(field(124, 12).trim() || "0", 8);
    const prefix = field(257, 6) === "ustar" ? h.toString("utf8", 345, 500).replace(/\0.*$/s, "") : "";
    const base = h.toString("utf8", 0, 100).replace(/\0.*$/s, "");
    const type = h[156] === 0 ? (base.endsWith("/") ? "5" : "0") : String.fromCharCode(h[156]);
    const start = at + BLOCK;
    if (start + size > data.length) throw new Error("unexpected EOF");
    if (type === "0") files.push([prefix ? `${prefix}/${base}` : base, data.subarray(start, start + size)]);
    at = start + Math.ceil(size / BLOCK) * BLOCK;
  }
  if (at < data.length && at + BLOCK > data.length && !data.subarray(at).every((b) => b === 0)) throw new Error("unexpected EOF");
  return files;
}

/** The regular files of a zip, from its central directory (stored or deflated). */
function zipFiles(data: Buffer): [string, Buffer][] {
  const notZip = () => new Error("zip: not a valid zip file");
  let end = -1;
  for (let i = data.length - 22; i >= Math.max(0, data.length - 22 - 0xffff); i--) {
    if (data.readUInt32LE(i) === 0x06054b50) {
      end = i;
      break;
    }
  }
  if (end < 0) throw notZip();
  const count = data.readUInt16LE(end + 10);
  let at = data.readUInt32LE(end + 16);
  const files: [string, Buffer][] = [];
  for (let n = 0; n < count; n++) {
    if (at + 46 > data.length || data.readUInt32LE(at) !== 0x02014b50) throw notZip();
    const creator = data[at + 5];
    const method = data.readUInt16LE(at + 10);
    const compressed = data.readUInt32LE(at + 20);
    const nameLength = data.readUInt16LE(at + 28);
    const external = data.readUInt32LE(at + 38);
    const local = data.readUInt32LE(at + 42);
    const name = data.toString("utf8", at + 46, at + 46 + nameLength);
    at += 46 + nameLength + data.readUInt16LE(at + 30) + data.readUInt16LE(at + 32);
    // Unix zips keep the mode in the high half of the external attributes; others mark folders by a final "/"
    const unixMode = creator === 3 ? external >>> 16 : 0;
    const regular = unixMode ? (unixMode & 0o170000) === 0o100000 : !name.endsWith("/");
    if (!regular) continue;
    if (local + 30 > data.length || data.readUInt32LE(local) !== 0x04034b50) throw notZip();
    const start = local + 30 + data.readUInt16LE(local + 26) + data.readUInt16LE(local + 28);
    const raw = data.subarray(start, start + compressed);
    if (method === 0) files.push([name, raw]);
    else if (method === 8) files.push([name, inflateRawSync(raw, { maxOutputLength: MAX_IMPORT })]);
    else throw new Error("zip: unsupported compression algorithm");
  }
  return files;
}
