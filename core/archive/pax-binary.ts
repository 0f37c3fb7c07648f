/**
 * Extended attributes travel in PAX records (`SCHILY.xattr.<name>=<raw bytes>`, as GNU tar and
 * Go's archive/tar write them), and their values are binary: `security.capability` holds
 * little-endian bit masks, so CAP_SETUID alone is the byte 0x80. tar-stream decodes and encodes
 * every PAX value as UTF-8, which turns such bytes into U+FFFD and back into different bytes.
 *
 * tar-stream offers no hook for this, so its two PAX functions are replaced, once per process,
 * with versions that are byte-for-byte the same except for `SCHILY.xattr.*` values, which are kept
 * as "binary" strings (one char per byte, Latin-1), both ways. `xattrValue`/`xattrRecord` convert
 * between those strings and Buffers. Other users of tar-stream see no change except that such
 * values now survive.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

export const XATTR_PREFIX = "SCHILY.xattr.";

interface PaxCodec {
  decodePax(buf: Uint8Array): Record<string, string>;
  encodePax(opts: { name?: string; linkname?: string | null; pax?: Record<string, string> | null }): Buffer;
}

const PATCHED = Symbol.for("engine.archive.pax-binary");

function isBinaryKey(key: string): boolean {
  return key.startsWith(XATTR_PREFIX);
}

/** `<len> <key>=<value>\n`, where `<len>` counts the whole record, its own digits included. */
function record(key: string, value: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(` ${key}=`), value, Buffer.from("\n")]);
  let len = body.length + 1;
  while (String(len).length + body.length !== len) len = String(len).length + body.length;
  return Buffer.concat([Buffer.from(String(len)), body]);
}

function decodePax(input: Uint8Array): Record<string, string> {
  const buf = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  const result: Record<string, string> = {};
  let at = 0;
  while (at < buf.length) {
    const space = buf.indexOf(0x20, at);
    if (space === -1) break;
    const len = parseInt(buf.toString("utf8", at, space), 10);
    if (!len || at + len > buf.length) break;
    const eq = buf.indexOf(0x3d, space + 1);
    if (eq === -1 || eq >= at + len) break;
    const key = buf.toString("utf8", space + 1, eq);
    result[key] = buf.toString(isBinaryKey(key) ? "latin1" : "utf8", eq + 1, at + len - 1);
    at += len;
  }
  return result;
}

function encodePax(opts: { name?: string; linkname?: string | null; pax?: Record<string, string> | null }): Buffer {
  const parts: Buffer[] = [];
  if (opts.name) parts.push(record("path", Buffer.from(opts.name)));
  if (opts.linkname) parts.push(record("linkpath", Buffer.from(opts.linkname)));
  for (const [key, value] of Object.entries(opts.pax ?? {})) {
    parts.push(record(key, Buffer.from(value, isBinaryKey(key) ? "latin1" : "utf8")));
  }
  return Buffer.concat(parts);
}

/** Makes tar-stream keep binary xattr values intact; safe to call many times. */
export function installBinaryPax(): void {
  const require = createRequire(import.meta.url);
  const headersFile = join(dirname(require.resolve("tar-stream")), "headers.js");
  const headers = require(headersFile) as PaxCodec & { [PATCHED]?: true };
  if (headers[PATCHED]) return;
  headers.decodePax = decodePax;
  headers.encodePax = encodePax;
  headers[PATCHED] = true;
}

/** An xattr value from a decoded PAX record. */
export function xattrValue(binary: string): Buffer {
  return Buffer.from(binary, "latin1");
}

/** An xattr value as a PAX record value for tar-stream's `pax` header field. */
export function xattrRecord(value: Buffer): string {
  return value.toString("latin1");
}
