/**
 * A SPDY/3.1 session, the server's side, over a connection already upgraded: streams the
 * client opens (SYN_STREAM) are announced to `onStream`, answered (SYN_REPLY) when accepted;
 * PING is echoed; GOAWAY, RST_STREAM, SETTINGS and WINDOW_UPDATE are honoured.
 *
 * Header blocks: one zlib context per direction for the whole session, primed with SPDY/3's
 * dictionary, each block ending at a sync flush. zlib's streams are asynchronous, so every
 * frame leaves through one ordered queue (a block compressed later must not overtake one
 * compressed first), and frames are handled in order as they come.
 *
 * Flow control (3.1): each stream and the session have a receive window of 64 KiB; it is given
 * back (WINDOW_UPDATE) as the stream's reader takes the data. The send windows start at 64 KiB
 * (or the client's SETTINGS) and grow with its WINDOW_UPDATEs; they are kept only once the
 * client has sent one: client-go's SPDY library (moby/spdystream) neither sends nor reads
 * WINDOW_UPDATE, and a sender waiting for it would wait forever.
 */
import { Readable, type Duplex } from "node:stream";
import { constants as zc, createDeflate, createInflate, type Deflate, type Inflate } from "node:zlib";
import { SPDY3_DICTIONARY } from "./spdy-dictionary.js";
import {
  controlFrame, dataFrame, decodeHeaders, encodeHeaders, FLAG_FIN, FrameType, parseFrames, RST_INVALID_STREAM, SETTINGS_INITIAL_WINDOW_SIZE, u32, type ControlFrame, type DataFrame,
} from "./spdy-frames.js";

export const INITIAL_WINDOW = 64 * 1024;
/** The largest DATA frame sent (the draft allows 16 MiB; smaller frames keep streams interleaved). */
const MAX_DATA = 16 * 1024;

/** Runs buffers through a zlib stream that lives as long as the session, one sync-flushed block at a time. */
function zlibBlocks(z: Deflate | Inflate): (data: Buffer) => Promise<Buffer> {
  let out: Buffer[] = [];
  z.on("data", (c: Buffer) => out.push(c));
  z.on("error", () => {});
  return (data) =>
    new Promise((resolve, reject) => {
      z.write(data);
      z.flush(zc.Z_SYNC_FLUSH, () => {
        const block = Buffer.concat(out);
        out = [];
        if (z.destroyed) reject(new Error("SPDY: the header block could not be (de)compressed"));
        else resolve(block);
      });
    });
}

export class SpdyStream {
  /** What the client sends on this stream; ends at its FIN (or a reset). */
  readonly input: Readable;
  private sendWindow: number;
  private localFin = false;
  private remoteFin = false;
  private waiters: (() => void)[] = [];
  reset = false;

  constructor(
    private readonly session: SpdySession,
    readonly id: number,
    readonly headers: Record<string, string>,
    initialWindow: number,
  ) {
    this.sendWindow = initialWindow;
    this.input = new Readable({ read: () => session.giveBack(this) });
  }

  /** Bytes taken by `input`'s reader and not yet given back to the client. */
  unacknowledged = 0;

  /** Sends `data`, in frames no larger than MAX_DATA, waiting for window where the client keeps one. */
  async write(data: Buffer): Promise<void> {
    for (let at = 0; at < data.length && !this.reset; ) {
      const room = this.session.flowControlled ? Math.min(this.sendWindow, this.session.sendWindow) : MAX_DATA;
      if (room <= 0) {
        await new Promise<void>((resolve) => this.waiters.push(resolve));
        continue;
      }
      const piece = data.subarray(at, at + Math.min(room, MAX_DATA));
      this.sendWindow -= piece.length;
      this.session.sendWindow -= piece.length;
      at += piece.length;
      await this.session.send(() => dataFrame(this.id, 0, piece));
    }
  }

  /** Our side is done (DATA with FIN). */
  async end(): Promise<void> {
    if (this.localFin || this.reset) return;
    this.localFin = true;
    await this.session.send(() => dataFrame(this.id, FLAG_FIN, Buffer.alloc(0)));
    this.session.forgetIfClosed(this);
  }

  /** @internal the client's FIN */
  remoteEnded(): void {
    if (this.remoteFin) return;
    this.remoteFin = true;
    this.input.push(null);
    this.session.forgetIfClosed(this);
  }

  get closed(): boolean {
    return this.reset || (this.localFin && this.remoteFin);
  }

  /** @internal the client's window grew (delta) or the stream or session can send again */
  grow(delta: number): void {
    this.sendWindow += delta;
    this.wake();
  }

  wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** @internal reset by the client, or by the session's end */
  abort(): void {
    if (this.reset) return;
    this.reset = true;
    if (!this.remoteFin) this.input.destroy();
    this.wake();
  }
}

export interface SpdySessionEvents {
  /** A stream the client opened: answer with `accept()` (SYN_REPLY) or `refuse()` (RST_STREAM). */
  onStream(stream: SpdyStream): void;
  /** The connection ended (closed, GOAWAY, or a protocol error). */
  onClose(): void;
}

export class SpdySession {
  private readonly compress = zlibBlocks(createDeflate({ dictionary: SPDY3_DICTIONARY }));
  private readonly decompress = zlibBlocks(createInflate({ dictionary: SPDY3_DICTIONARY }));
  private readonly streams = new Map<number, SpdyStream>();
  private outgoing: Promise<void> = Promise.resolve();
  private incoming: Promise<void> = Promise.resolve();
  private pending: Buffer = Buffer.alloc(0);
  private initialSendWindow = INITIAL_WINDOW;
  /** Set once the client has sent a WINDOW_UPDATE: it keeps flow control, so do we. */
  flowControlled = false;
  sendWindow = INITIAL_WINDOW;
  private sessionUnacknowledged = 0;
  private closed = false;

  constructor(
    private readonly socket: Duplex,
    private readonly events: SpdySessionEvents,
    head: Buffer = Buffer.alloc(0),
  ) {
    socket.on("data", (chunk: Buffer) => this.received(chunk));
    socket.on("close", () => this.close());
    socket.on("end", () => this.close());
    socket.on("error", () => this.close());
    if (head.length) this.received(head);
  }

  /** Queues a frame; `make` runs in turn (after the frames queued before it). */
  send(make: () => Buffer | Promise<Buffer>): Promise<void> {
    const next = this.outgoing.then(async () => {
      if (this.closed) return;
      const frame = await make();
      if (!this.socket.writable) return;
      if (!this.socket.write(frame)) await new Promise<void>((resolve) => this.socket.once("drain", resolve));
    });
    this.outgoing = next.catch(() => {});
    return next;
  }

  accept(stream: SpdyStream): Promise<void> {
    return this.send(async () => controlFrame(FrameType.SynReply, 0, Buffer.concat([u32(stream.id), await this.compress(encodeHeaders({}))])));
  }

  refuse(stream: SpdyStream, status: number): Promise<void> {
    this.streams.delete(stream.id);
    stream.abort();
    return this.send(() => controlFrame(FrameType.RstStream, 0, u32(stream.id, status)));
  }

  /** Sends GOAWAY, then ends the connection once the frames queued have left. */
  async goAway(): Promise<void> {
    await this.send(() => controlFrame(FrameType.GoAway, 0, u32(0, 0)));
    this.socket.end();
    this.close();
  }

  /** @internal a stream's reader took data: the windows get it back */
  giveBack(stream: SpdyStream): void {
    const bytes = stream.unacknowledged;
    if (bytes > 0 && !stream.closed) {
      stream.unacknowledged = 0;
      void this.send(() => controlFrame(FrameType.WindowUpdate, 0, u32(stream.id, bytes)));
    }
    if (this.sessionUnacknowledged > 0) {
      const s = this.sessionUnacknowledged;
      this.sessionUnacknowledged = 0;
      void this.send(() => controlFrame(FrameType.WindowUpdate, 0, u32(0, s)));
    }
  }

  forgetIfClosed(stream: SpdyStream): void {
    if (stream.closed) this.streams.delete(stream.id);
  }

  private received(chunk: Buffer): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    let parsed;
    try {
      parsed = parseFrames(this.pending);
    } catch {
      return this.protocolError();
    }
    this.pending = Buffer.from(parsed.rest);
    for (const frame of parsed.frames) {
      this.incoming = this.incoming.then(() => (frame.control ? this.control(frame) : this.data(frame))).catch(() => this.protocolError());
    }
  }

  private data(frame: DataFrame): void {
    const stream = this.streams.get(frame.streamId);
    if (!stream) return void this.send(() => controlFrame(FrameType.RstStream, 0, u32(frame.streamId, RST_INVALID_STREAM)));
    if (frame.data.length) {
      stream.unacknowledged += frame.data.length;
      this.sessionUnacknowledged += frame.data.length;
      // a reader that keeps up gets the window back at once; a slow one when it reads (giveBack)
      if (stream.input.push(frame.data)) this.giveBack(stream);
    }
    if (frame.flags & FLAG_FIN) stream.remoteEnded();
  }

  private async control(frame: ControlFrame): Promise<void> {
    const b = frame.body;
    switch (frame.type) {
      case FrameType.SynStream: {
        const id = b.readUInt32BE(0) & 0x7fffffff;
        const headers = decodeHeaders(await this.decompress(b.subarray(10)));
        const stream = new SpdyStream(this, id, headers, this.initialSendWindow);
        this.streams.set(id, stream);
        if (frame.flags & FLAG_FIN) stream.remoteEnded();
        this.events.onStream(stream);
        return;
      }
      case FrameType.RstStream: {
        const stream = this.streams.get(b.readUInt32BE(0) & 0x7fffffff);
        if (stream) {
          this.streams.delete(stream.id);
          stream.abort();
        }
        return;
      }
      case FrameType.Settings: {
        const count = b.readUInt32BE(0);
        for (let i = 0; i < count; i++) {
          const id = b.readUInt32BE(4 + 8 * i) & 0xffffff;
          const value = b.readUInt32BE(8 + 8 * i);
          if (id === SETTINGS_INITIAL_WINDOW_SIZE) {
            const delta = value - this.initialSendWindow;
            this.initialSendWindow = value;
            for (const s of this.streams.values()) s.grow(delta);
          }
        }
        return;
      }
      case FrameType.Ping:
        return void this.send(() => controlFrame(FrameType.Ping, 0, b.subarray(0, 4)));
      case FrameType.GoAway:
        return this.close();
      case FrameType.Headers:
        // more headers for a stream: decompressed to keep the zlib context in step, else unused
        await this.decompress(b.subarray(4));
        return;
      case FrameType.WindowUpdate: {
        const id = b.readUInt32BE(0) & 0x7fffffff;
        const delta = b.readUInt32BE(4) & 0x7fffffff;
        this.flowControlled = true;
        if (id === 0) {
          this.sendWindow += delta;
          for (const s of this.streams.values()) s.wake();
        } else this.streams.get(id)?.grow(delta);
        return;
      }
      default:
        return; // unknown control frames are ignored, as the draft says
    }
  }

  private protocolError(): void {
    this.socket.destroy();
    this.close();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.streams.values()) s.abort();
    this.streams.clear();
    this.events.onClose();
  }
}
