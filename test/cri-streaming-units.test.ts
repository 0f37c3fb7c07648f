/**
 * The parts of the CRI streaming server below kubectl's reach: the SPDY/3.1 session (driven by
 * a client written here from the draft: frames, header blocks compressed with the dictionary,
 * flow control) and the request tokens (single-use, expiry, limit).
 */
import { expect } from "chai";
import { duplexPair } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { constants as zc, createDeflate, createInflate, type Deflate, type Inflate } from "node:zlib";
import { SPDY3_DICTIONARY } from "../host/cri/streaming/spdy/spdy-dictionary.js";
import { controlFrame, dataFrame, encodeHeaders, FLAG_FIN, FrameType, parseFrames, u32, type Frame } from "../host/cri/streaming/spdy/spdy-frames.js";
import { SpdySession, type SpdyStream } from "../host/cri/streaming/spdy/spdy-session.js";
import { MAX_WAITING, StreamTokens, TOKEN_TTL_MS } from "../host/cri/streaming/stream-tokens.js";

function zlibBlock(z: Deflate | Inflate) {
  let out: Buffer[] = [];
  z.on("data", (c: Buffer) => out.push(c));
  return (data: Buffer) =>
    new Promise<Buffer>((resolve) => {
      z.write(data);
      z.flush(zc.Z_SYNC_FLUSH, () => {
        resolve(Buffer.concat(out));
        out = [];
      });
    });
}

/** A SPDY client on one end of a pipe, the session under test on the other. */
function pair() {
  const [ours, theirs] = duplexPair();
  const streams: SpdyStream[] = [];
  const session = new SpdySession(theirs, { onStream: (s) => streams.push(s), onClose: () => {} });
  const compress = zlibBlock(createDeflate({ dictionary: SPDY3_DICTIONARY }));
  const decompress = zlibBlock(createInflate({ dictionary: SPDY3_DICTIONARY }));
  const frames: Frame[] = [];
  let pending = Buffer.alloc(0);
  ours.on("data", (chunk: Buffer) => {
    const parsed = parseFrames(Buffer.concat([pending, chunk]));
    pending = Buffer.from(parsed.rest);
    frames.push(...parsed.frames);
  });
  return {
    session,
    streams,
    frames,
    decompress,
    send: (frame: Buffer) => ours.write(frame),
    async open(id: number, headers: Record<string, string>) {
      const block = await compress(encodeHeaders(headers));
      const body = Buffer.concat([u32(id, 0), Buffer.from([0, 0]), block]);
      ours.write(controlFrame(FrameType.SynStream, 0, body));
    },
    dataBytes: (id: number) => frames.filter((f) => !f.control && f.streamId === id).reduce((n, f) => n + (f.control ? 0 : f.data.length), 0),
  };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await sleep(10);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("CRI streaming units: the SPDY/3.1 session and the tokens", function () {
  it("the dictionary is the draft's 1423 bytes, starting with options and ending with enq=0.", function () {
    expect(SPDY3_DICTIONARY.length).to.equal(1423);
    expect(SPDY3_DICTIONARY.subarray(0, 11).toString("latin1")).to.equal("\0\0\0\x07options");
    expect(SPDY3_DICTIONARY.subarray(-6).toString("latin1")).to.equal("enq=0.");
  });

  it("streams: opened with compressed headers (two blocks on one zlib context), replied, data in with FIN, windows given back", async function () {
    const c = pair();
    await c.open(1, { streamType: "stdin", port: "80" });
    await c.open(3, { streamtype: "error" });
    await until(() => c.streams.length === 2, "two streams");
    expect(c.streams[0].headers).to.deep.equal({ streamtype: "stdin", port: "80" });
    expect(c.streams[1].headers.streamtype).to.equal("error");
    await c.session.accept(c.streams[0]);
    await until(() => c.frames.some((f) => f.control && f.type === FrameType.SynReply), "SYN_REPLY");
    const reply = c.frames.find((f) => f.control && f.type === FrameType.SynReply)!;
    if (!reply.control) throw new Error("not a control frame");
    expect(reply.body.readUInt32BE(0)).to.equal(1);
    expect((await c.decompress(reply.body.subarray(4))).readUInt32BE(0)).to.equal(0);
    const got: Buffer[] = [];
    c.streams[0].input.on("data", (d: Buffer) => got.push(d));
    const ended = new Promise((resolve) => c.streams[0].input.once("end", resolve));
    c.send(dataFrame(1, 0, Buffer.from("hello ")));
    c.send(dataFrame(1, FLAG_FIN, Buffer.from("world")));
    await ended;
    expect(Buffer.concat(got).toString()).to.equal("hello world");
    await until(() => c.frames.filter((f) => f.control && f.type === FrameType.WindowUpdate).length >= 2, "WINDOW_UPDATEs");
    const updates = c.frames.filter((f) => f.control && f.type === FrameType.WindowUpdate).map((f) => (f.control ? [f.body.readUInt32BE(0), f.body.readUInt32BE(4)] : []));
    const given = (id: number) => updates.filter((u) => u[0] === id).reduce((n, u) => n + u[1], 0);
    expect(given(1)).to.equal(11);
    expect(given(0)).to.equal(11);
  });

  it("PING is echoed; data for an unknown stream is refused with RST_STREAM", async function () {
    const c = pair();
    c.send(controlFrame(FrameType.Ping, 0, u32(7)));
    c.send(dataFrame(9, 0, Buffer.from("x")));
    await until(() => c.frames.length >= 2, "answers");
    const ping = c.frames.find((f) => f.control && f.type === FrameType.Ping);
    expect(ping && ping.control && ping.body.readUInt32BE(0)).to.equal(7);
    const rst = c.frames.find((f) => f.control && f.type === FrameType.RstStream);
    expect(rst && rst.control && rst.body.readUInt32BE(0)).to.equal(9);
  });

  it("flow control: a client that never sends WINDOW_UPDATE (client-go's) gets everything", async function () {
    const c = pair();
    await c.open(1, { streamtype: "stdout" });
    await until(() => c.streams.length === 1, "the stream");
    await c.streams[0].write(Buffer.alloc(200 * 1024, 1));
    await until(() => c.dataBytes(1) === 200 * 1024, "200 KiB");
  });

  it("flow control: with a client that keeps windows, sending stops at 64 KiB and goes on as the window grows", async function () {
    const c = pair();
    await c.open(1, { streamtype: "stdout" });
    await until(() => c.streams.length === 1, "the stream");
    c.send(controlFrame(FrameType.WindowUpdate, 0, u32(0, 1)));
    await until(() => c.session.flowControlled, "flow control on");
    const done = c.streams[0].write(Buffer.alloc(100 * 1024, 2));
    await until(() => c.dataBytes(1) === 64 * 1024, "the first 64 KiB");
    await sleep(100);
    expect(c.dataBytes(1)).to.equal(64 * 1024);
    c.send(controlFrame(FrameType.WindowUpdate, 0, u32(1, 64 * 1024)));
    c.send(controlFrame(FrameType.WindowUpdate, 0, u32(0, 64 * 1024)));
    await done;
    await until(() => c.dataBytes(1) === 100 * 1024, "the rest");
  });

  it("tokens: single-use, for their kind only, gone after a minute, at most MAX_WAITING", function () {
    let now = 1000;
    const tokens = new StreamTokens(() => now);
    const ticket = { kind: "exec" as const, containerId: "c", cmd: ["true"], tty: false, stdin: false, stdout: true, stderr: false };
    const a = tokens.put(ticket);
    expect(a).to.match(/^[A-Za-z0-9_-]{11}$/);
    expect(tokens.take(a, "attach")).to.equal(undefined);
    const b = tokens.put(ticket);
    expect(tokens.take(b, "exec")).to.deep.equal(ticket);
    expect(tokens.take(b, "exec")).to.equal(undefined);
    const late = tokens.put(ticket);
    now += TOKEN_TTL_MS;
    expect(tokens.take(late, "exec")).to.equal(undefined);
    for (let i = 0; i < MAX_WAITING; i++) tokens.put(ticket);
    expect(() => tokens.put(ticket)).to.throw(/too many streaming requests/);
  });
});
