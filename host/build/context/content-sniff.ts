/**
 * What a remote context is, from its Content-Type and its first bytes, as Docker's daemon
 * decides (builder/remotecontext/remote.go, mimetype.go): a missing type or exactly
 * `application/octet-stream` (what servers say for a file named `Dockerfile`) is sniffed from
 * the first 100 bytes with the rules of Go's http.DetectContentType; the type is then searched
 * for one of the accepted ones (tar, gzip, bzip2, xz, octet-stream, text/plain). `text/plain`
 * is a Dockerfile alone; any other accepted type is a tar to unpack; none is an error.
 *
 * Only the signatures that change the answer are kept from Go's table: the text ones (HTML and
 * XML are refused, plain text is a Dockerfile) and the binary formats it names (refused, but
 * gzip); any other binary stream is octet-stream, so a tar (plain, bzip2, xz or zstd ones too).
 */

/** Bytes of the body looked at, as Docker's maxPreambleLength. */
export const PREAMBLE_BYTES = 100;

const OCTET_STREAM = "application/octet-stream";
const TEXT_PLAIN = "text/plain";

/** Docker's acceptableRemoteMIME, searched for anywhere in the type (not anchored, as Docker). */
const ACCEPTABLE = /(?:application\/(?:(?:x-)?tar|octet-stream|((?:x-)?(?:gzip|bzip2?|xz)))|(?:text\/plain))/;

/** HTML's start tags Go recognises (case-insensitive, after white space, then a space or `>`). */
const HTML_TAGS = ["<!DOCTYPE HTML", "<HTML", "<HEAD", "<SCRIPT", "<IFRAME", "<H1", "<DIV", "<FONT", "<TABLE", "<A", "<STYLE", "<TITLE", "<B", "<BODY", "<BR", "<P", "<!--"];

/** Binary formats by their first bytes (`.` in a pattern: any byte), with Go's names for them. */
const MAGIC: [string, string][] = [
  ["%PDF-", "application/pdf"],
  ["%!PS-Adobe-", "application/postscript"],
  ["\x00\x00\x01\x00", "image/x-icon"],
  ["\x00\x00\x02\x00", "image/x-icon"],
  ["BM", "image/bmp"],
  ["GIF87a", "image/gif"],
  ["GIF89a", "image/gif"],
  ["RIFF....WEBPVP", "image/webp"],
  ["\x89PNG\x0D\x0A\x1A\x0A", "image/png"],
  ["\xFF\xD8\xFF", "image/jpeg"],
  ["FORM....AIFF", "audio/aiff"],
  ["ID3", "audio/mpeg"],
  ["OggS\x00", "application/ogg"],
  ["MThd\x00\x00\x00\x06", "audio/midi"],
  ["RIFF....AVI ", "video/avi"],
  ["RIFF....WAVE", "audio/wave"],
  ["\x1A\x45\xDF\xA3", "video/webm"],
  ["\x00\x01\x00\x00", "font/ttf"],
  ["OTTO", "font/otf"],
  ["ttcf", "font/collection"],
  ["wOFF", "font/woff"],
  ["wOF2", "font/woff2"],
  ["\x1F\x8B\x08", "application/x-gzip"],
  ["PK\x03\x04", "application/zip"],
  ["Rar!\x1A\x07\x00", "application/x-rar-compressed"],
  ["Rar!\x1A\x07\x01\x00", "application/x-rar-compressed"],
  ["\x00\x61\x73\x6D", "application/wasm"],
];

const isWhiteSpace = (b: number) => b === 0x09 || b === 0x0a || b === 0x0c || b === 0x0d || b === 0x20;
/** Bytes that make data binary for Go's text check (controls other than white space and ESC). */
const isBinaryByte = (b: number) => b <= 0x08 || b === 0x0b || (b >= 0x0e && b <= 0x1a) || (b >= 0x1c && b <= 0x1f);

function startsWithPattern(data: Buffer, at: number, pattern: string, caseless = false): boolean {
  if (data.length - at < pattern.length) return false;
  for (let i = 0; i < pattern.length; i++) {
    const want = pattern.charCodeAt(i);
    let got = data[at + i];
    if (want === 0x2e && !caseless) continue; // "." in a binary pattern: any byte
    if (caseless && got >= 0x61 && got <= 0x7a) got -= 0x20;
    if (got !== want) return false;
  }
  return true;
}

/** The media type of `data` (no parameters), by the rules of Go's http.DetectContentType. */
export function detectContentType(data: Buffer): string {
  let start = 0;
  while (start < data.length && isWhiteSpace(data[start])) start++;
  for (const tag of HTML_TAGS) {
    if (!startsWithPattern(data, start, tag, true) || data.length <= start + tag.length) continue;
    const next = data[start + tag.length];
    if (next === 0x20 || next === 0x3e) return "text/html";
  }
  if (startsWithPattern(data, start, "<?xml")) return "text/xml";
  if (data[0] === 0xfe && data[1] === 0xff) return TEXT_PLAIN; // UTF-16BE byte order mark
  if (data[0] === 0xff && data[1] === 0xfe) return TEXT_PLAIN; // UTF-16LE
  if (data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) return TEXT_PLAIN; // UTF-8
  for (const [pattern, type] of MAGIC) if (startsWithPattern(data, 0, pattern)) return type;
  return data.some(isBinaryByte) ? OCTET_STREAM : TEXT_PLAIN;
}

/**
 * What a remote body is: "dockerfile" (text/plain), "archive", or the reason it is refused.
 * `contentType` is the server's header ("" when it sent none), `preamble` the first bytes.
 */
export function remoteContentKind(contentType: string, preamble: Buffer): { kind: "dockerfile" | "archive" } | { refused: string } {
  if (preamble.length === 0) return { refused: "empty response" };
  const type = contentType === "" || contentType === OCTET_STREAM ? detectContentType(preamble) : contentType;
  const accepted = ACCEPTABLE.exec(type)?.[0];
  // the server's type is named, even "" when it sent none and the sniffed one was refused (Docker's)
  if (accepted === undefined) return { refused: `unsupported Content-Type ${JSON.stringify(contentType)}` };
  return { kind: accepted === TEXT_PLAIN ? "dockerfile" : "archive" };
}
