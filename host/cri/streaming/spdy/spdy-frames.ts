/**
 * SPDY/3.1 frames (draft 3.1), as bytes and back. A frame has an 8-byte head: a control frame
 * starts with the control bit, the version (3) and its type, a data frame with its stream id;
 * then 8 bits of flags and a 24-bit length. Header blocks are name/value pairs (lengths 32-bit,
 * names lower case, several values of a name joined by NUL), compressed by the session
 * (spdy-session.ts) with one zlib context per direction: this file sees them uncompressed.
 */

export const VERSION = 3;

export const enum FrameType {
  SynStream = 1,
  SynReply = 2,
  RstStream = 3,
  Settings = 4,
  Ping = 6,
  GoAway = 7,
  Headers = 8,
  WindowUpdate = 9,
}

export const FLAG_FIN = 0x01;
export const SETTINGS_INITIAL_WINDOW_SIZE = 7;

/** RST_STREAM status codes used here. */
export const RST_PROTOCOL_ERROR = 1;
export const RST_INVALID_STREAM = 2;
export const RST_REFUSED_STREAM = 3;
export const RST_CANCEL = 5;
export const RST_FLOW_CONTROL_ERROR = 7;

export interface ControlFrame {
  control: true;
  type: number;
  flags: number;
  body: Buffer;
}

export interface DataFrame {
  control: false;
  streamId: number;
  flags: number;
  data: Buffer;
}

export type Frame = ControlFrame | DataFrame;

/** Takes whole frames off the front of `buf`; answers them and what is left (a frame cut short waits for more). */
export function parseFrames(buf: Buffer): { frames: Frame[]; rest: Buffer } {
  const frames: Frame[] = [];
  let at = 0;
  while (buf.length - at >= 8) {
    const length = buf.readUIntBE(at + 5, 3);
    if (buf.length - at < 8 + length) break;
    const flags = buf[at + 4];
    const payload = buf.subarray(at + 8, at + 8 + length);
    if (buf[at] & 0x80) {
      const version = buf.readUInt16BE(at) & 0x7fff;
      if (version !== VERSION) throw new Error(`SPDY: version ${version} is not 3`);
      frames.push({ control: true, type: buf.readUInt16BE(at + 2), flags, body: Buffer.from(payload) });
    } else {
      frames.push({ control: false, streamId: buf.readUInt32BE(at) & 0x7fffffff, flags, data: Buffer.from(payload) });
    }
    at += 8 + length;
  }
  return { frames, rest: buf.subarray(at) };
}

export function controlFrame(type: FrameType, flags: number, body: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt16BE(0x8000 | VERSION, 0);
  head.writeUInt16BE(type, 2);
  head[4] = flags;
  head.writeUIntBE(body.length, 5, 3);
  return Buffer.concat([head, body]);
}

export function dataFrame(streamId: number, flags: number, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(streamId & 0x7fffffff, 0);
  head[4] = flags;
  head.writeUIntBE(data.length, 5, 3);
  return Buffer.concat([head, data]);
}

/** A 32-bit word for frame bodies (stream ids, statuses, deltas). */
export function u32(...values: number[]): Buffer {
  const b = Buffer.alloc(4 * values.length);
  values.forEach((v, i) => b.writeUInt32BE(v >>> 0, 4 * i));
  return b;
}

/** The uncompressed header block: the count, then each name and its values (NUL-joined). */
export function encodeHeaders(headers: Record<string, string | string[]>): Buffer {
  const entries = Object.entries(headers);
  const parts: Buffer[] = [u32(entries.length)];
  for (const [name, value] of entries) {
    const n = Buffer.from(name.toLowerCase(), "utf8");
    const v = Buffer.from(Array.isArray(value) ? value.join("\0") : value, "utf8");
    parts.push(u32(n.length), n, u32(v.length), v);
  }
  return Buffer.concat(parts);
}

export function decodeHeaders(block: Buffer): Record<string, string> {
  const headers: Record<string, string> = {};
  let at = 4;
  const count = block.readUInt32BE(0);
  for (let i = 0; i < count; i++) {
    const nl = block.readUInt32BE(at);
    const name = block.subarray(at + 4, at + 4 + nl).toString("utf8").toLowerCase();
    at += 4 + nl;
    const vl = block.readUInt32BE(at);
    // several values: the first is what the streams here need
    headers[name] = block.subarray(at + 4, at + 4 + vl).toString("utf8").split("\0")[0];
    at += 4 + vl;
  }
  return headers;
}
