/**
 * Reads the first bytes a TLS client sends (its ClientHello) to tell whether it can speak
 * TLS 1.2 or later. OpenSSL 3 negotiates TLS 1.0 and 1.1 only at security level 0, so such
 * clients go to a context of their own (see tls-server.ts); every other client goes to the
 * context at the default level.
 *
 * The highest version offered is the larger of the ClientHello's `legacy_version` (a TLS 1.2
 * or 1.3 client puts 0x0303 there, RFC 8446 4.1.2) and the versions in its
 * `supported_versions` extension (GREASE values left out). So a modern client is known from
 * its first 11 bytes; only an old one costs the parse of the whole first record. Bytes that
 * are no ClientHello at all go to the modern context, which refuses them as it always did.
 */

export type HelloRoute = "modern" | "legacy" | "wait";

const TLS1_2 = 0x0303;
const RECORD_HEADER = 5;
/** A TLS record holds at most 2^14 bytes plus expansion (RFC 5246 6.2.3). */
export const MAX_FIRST_RECORD = RECORD_HEADER + 16384 + 2048;
const HANDSHAKE = 0x16;
const CLIENT_HELLO = 0x01;
const SUPPORTED_VERSIONS = 0x002b;

/** Decides from the bytes received so far; "wait" asks for more (never past MAX_FIRST_RECORD). */
export function routeClientHello(buf: Buffer): HelloRoute {
  if (buf.length === 0) return "wait";
  // SSL 2.0-format ClientHello, which some old clients still send to offer TLS 1.0.
  if (buf[0] & 0x80) {
    if (buf.length < 5) return "wait";
    return buf[2] === CLIENT_HELLO && buf.readUInt16BE(3) < TLS1_2 ? "legacy" : "modern";
  }
  if (buf[0] !== HANDSHAKE) return "modern";
  if (buf.length < 11) return "wait";
  if (buf[5] !== CLIENT_HELLO || buf.readUInt16BE(9) >= TLS1_2) return "modern";
  const recordEnd = RECORD_HEADER + buf.readUInt16BE(3);
  if (recordEnd > MAX_FIRST_RECORD) return "modern";
  if (buf.length < recordEnd) return "wait";
  return offersModernVersion(buf.subarray(9, recordEnd)) ? "modern" : "legacy";
}

/**
 * Walks the ClientHello body (from legacy_version on) to its supported_versions extension.
 * A body cut short (a ClientHello spread over several records) counts as not offering one.
 */
function offersModernVersion(body: Buffer): boolean {
  let at = 2 + 32; // legacy_version, random
  const skip = (lengthBytes: number): boolean => {
    if (at + lengthBytes > body.length) return false;
    const len = lengthBytes === 1 ? body[at] : body.readUInt16BE(at);
    at += lengthBytes + len;
    return at <= body.length;
  };
  if (!skip(1) || !skip(2) || !skip(1)) return false; // session_id, cipher_suites, compression
  if (at + 2 > body.length) return false;
  const end = Math.min(body.length, at + 2 + body.readUInt16BE(at));
  at += 2;
  while (at + 4 <= end) {
    const type = body.readUInt16BE(at);
    const len = body.readUInt16BE(at + 2);
    const data = body.subarray(at + 4, Math.min(end, at + 4 + len));
    if (type === SUPPORTED_VERSIONS) {
      for (let i = 1; i + 1 < Math.min(data.length, 1 + data[0]); i += 2) {
        const version = data.readUInt16BE(i);
        if (version >= TLS1_2 && !isGrease(version)) return true;
      }
      return false;
    }
    at += 4 + len;
  }
  return false;
}

/** RFC 8701: values like 0x0a0a, 0x1a1a, ... are sent to keep servers tolerant, never meant. */
function isGrease(value: number): boolean {
  return (value & 0x0f0f) === 0x0a0a && value >> 8 === (value & 0xff);
}
