/**
 * DNS on the wire, for the embedded DNS server's tests (test/network-dns.test.ts), written apart
 * from the code under test: queries built and replies parsed byte by byte, a host resolver
 * stand-in on 127.0.0.1 (UDP and TCP on one port) that answers one made-up name and counts what it
 * is asked, UDP and TCP clients with bounded waits, and Node's resolver (c-ares) pointed at a port.
 */
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { Resolver } from "node:dns/promises";
import { connect, createServer, type Server, type Socket } from "node:net";
import type { DnsUpstream } from "../../plugins/network-bridge/dns-resolver.js";

export const TYPE_A = 1;
export const TYPE_TXT = 16;
export const TYPE_AAAA = 28;
export const TYPE_MX = 15;
/** The one name the stand-in upstream knows, and its address. */
export const UPSTREAM_NAME = "upstream.test";
export const UPSTREAM_ADDRESS = [10, 1, 2, 3];

/** A query for `name`, optionally with an EDNS0 OPT record, as a stub resolver sends it. */
export function queryPacket(id: number, name: string, type: number, opts: { edns?: number; opcode?: number; questions?: number } = {}): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(0x0100 | ((opts.opcode ?? 0) << 11), 2); // RD
  header.writeUInt16BE(opts.questions ?? 1, 4);
  header.writeUInt16BE(opts.edns ? 1 : 0, 10);
  const labels = name.split(".").filter(Boolean).flatMap((l) => [Buffer.from([l.length]), Buffer.from(l)]);
  const question = Buffer.concat([...labels, Buffer.from([0]), u16(type), u16(1)]);
  const opt = opts.edns ? Buffer.concat([Buffer.from([0]), u16(41), u16(opts.edns), Buffer.alloc(4), u16(0)]) : Buffer.alloc(0);
  return Buffer.concat([header, ...Array<Buffer>(opts.questions ?? 1).fill(question), opt]);
}

/** The packet with one record announced in the additional section. */
export function withAdditional(packet: Buffer): Buffer {
  packet.writeUInt16BE(1, 10);
  return packet;
}

export function u16(value: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(value);
  return b;
}

/** Offset after the name at `offset` (labels or a compression pointer). */
function skipName(msg: Buffer, offset: number): number {
  let at = offset;
  for (;;) {
    const size = msg[at]!;
    if (size === 0) return at + 1;
    if ((size & 0xc0) === 0xc0) return at + 2;
    at += size + 1;
  }
}

export function readQuestionName(msg: Buffer): string {
  const labels: string[] = [];
  for (let at = 12; msg[at] !== 0; at += msg[at]! + 1) labels.push(msg.subarray(at + 1, at + 1 + msg[at]!).toString());
  return labels.join(".");
}

export interface Reply {
  id: number;
  rcode: number;
  truncated: boolean;
  recursionAvailable: boolean;
  answers: { type: number; ttl: number; rdata: Buffer }[];
}

export function parseReply(msg: Buffer): Reply {
  const flags = msg.readUInt16BE(2);
  let at = 12;
  for (let i = 0; i < msg.readUInt16BE(4); i++) at = skipName(msg, at) + 4;
  const answers: Reply["answers"] = [];
  for (let i = 0; i < msg.readUInt16BE(6); i++) {
    at = skipName(msg, at);
    const length = msg.readUInt16BE(at + 8);
    answers.push({ type: msg.readUInt16BE(at), ttl: msg.readUInt32BE(at + 4), rdata: msg.subarray(at + 10, at + 10 + length) });
    at += 10 + length;
  }
  return { id: msg.readUInt16BE(0), rcode: flags & 0x0f, truncated: (flags & 0x0200) !== 0, recursionAvailable: (flags & 0x80) !== 0, answers };
}

export type UpstreamMode = "answer" | "servfail" | "silent" | "wrong-id";

/** A host resolver stand-in on 127.0.0.1 (UDP and TCP on one port). */
export class TestUpstream {
  udpQueries = 0;
  tcpQueries = 0;
  lastReply: Buffer | null = null;
  port = 0;
  private udp: UdpSocket | null = null;
  private tcp: Server | null = null;

  constructor(readonly mode: UpstreamMode) {}

  get upstream(): DnsUpstream {
    return { address: "127.0.0.1", port: this.port };
  }

  /** Binds UDP on a free port, then TCP on the same; again (bounded) if a TCP socket has that port. */
  async start(): Promise<this> {
    for (let attempt = 1; ; attempt++) {
      const udp = createSocket("udp4");
      await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", resolve));
      const port = udp.address().port;
      const tcp = createServer((socket) => this.serveTcp(socket));
      const error = await new Promise<Error | null>((resolve) => {
        tcp.once("error", resolve);
        tcp.listen(port, "127.0.0.1", () => resolve(null));
      });
      if (error) {
        udp.close();
        if (attempt < 10) continue;
        throw error;
      }
      udp.on("message", (msg, peer) => {
        this.udpQueries++;
        const reply = this.reply(msg);
        if (reply) udp.send(reply, peer.port, peer.address);
      });
      [this.udp, this.tcp, this.port] = [udp, tcp, port];
      return this;
    }
  }

  reset(): void {
    this.udpQueries = this.tcpQueries = 0;
    this.lastReply = null;
  }

  async stop(): Promise<void> {
    this.udp?.close();
    await new Promise((resolve) => (this.tcp ? this.tcp.close(resolve) : resolve(undefined)));
  }

  private serveTcp(socket: Socket): void {
    socket.on("error", () => undefined);
    let buffered = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const msg = buffered.subarray(2, 2 + buffered.readUInt16BE(0));
        buffered = buffered.subarray(2 + msg.length);
        this.tcpQueries++;
        const reply = this.reply(msg);
        if (reply) socket.write(Buffer.concat([u16(reply.length), reply]));
      }
    });
  }

  private reply(query: Buffer): Buffer | null {
    if (this.mode === "silent") return null;
    const questionEnd = skipName(query, 12) + 4;
    const type = query.readUInt16BE(questionEnd - 4);
    const known = readQuestionName(query).toLowerCase() === UPSTREAM_NAME && type === TYPE_A && this.mode !== "servfail";
    const header = Buffer.from(query.subarray(0, 12));
    const rcode = this.mode === "servfail" ? 2 : known ? 0 : 3;
    header.writeUInt16BE(0x8180 | rcode, 2);
    header.writeUInt16BE(known ? 1 : 0, 6);
    header.writeUInt16BE(0, 8);
    header.writeUInt16BE(0, 10);
    if (this.mode === "wrong-id") header.writeUInt16BE((query.readUInt16BE(0) + 1) & 0xffff, 0);
    const answer = known ? Buffer.concat([u16(0xc00c), u16(TYPE_A), u16(1), Buffer.from([0, 0, 0, 42]), u16(4), Buffer.from(UPSTREAM_ADDRESS)]) : Buffer.alloc(0);
    this.lastReply = Buffer.concat([header, query.subarray(12, questionEnd), answer]);
    return this.lastReply;
  }
}

/** Sends `packets` from one socket and collects every reply that comes within `waitMs`. */
export async function udpExchange(port: number, packets: Buffer[], waitMs: number): Promise<Buffer[]> {
  const socket = createSocket("udp4");
  const replies: Buffer[] = [];
  socket.on("message", (msg) => replies.push(msg));
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  for (const p of packets) socket.send(p, port, "127.0.0.1");
  await sleep(waitMs);
  socket.close();
  return replies;
}

/** One UDP query; resolves with the reply, or rejects after `waitMs`. */
export async function udpQuery(port: number, packet: Buffer, waitMs = 2000): Promise<{ reply: Buffer; ms: number }> {
  const socket = createSocket("udp4");
  const started = Date.now();
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no reply in ${waitMs} ms`)), waitMs);
      socket.on("message", (reply) => {
        clearTimeout(timer);
        resolve({ reply, ms: Date.now() - started });
      });
      socket.send(packet, port, "127.0.0.1");
    });
  } finally {
    socket.close();
  }
}

/** A TCP connection that sends length-prefixed messages and collects the replies. */
export class TcpClient {
  readonly replies: Buffer[] = [];
  closed = false;
  private buffered = Buffer.alloc(0);
  readonly socket: Socket;

  constructor(port: number) {
    this.socket = connect(port, "127.0.0.1");
    this.socket.on("error", () => undefined);
    this.socket.on("close", () => (this.closed = true));
    this.socket.on("data", (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      while (this.buffered.length >= 2 && this.buffered.length >= 2 + this.buffered.readUInt16BE(0)) {
        this.replies.push(this.buffered.subarray(2, 2 + this.buffered.readUInt16BE(0)));
        this.buffered = this.buffered.subarray(2 + this.buffered.readUInt16BE(0));
      }
    });
  }

  send(...messages: Buffer[]): void {
    this.socket.write(Buffer.concat(messages.flatMap((m) => [u16(m.length), m])));
  }

  /** Waits (bounded) until `count` replies arrived. */
  async waitFor(count: number, ms = 3000): Promise<Buffer[]> {
    await until(() => this.replies.length >= count, ms);
    return this.replies;
  }

  destroy(): void {
    this.socket.destroy();
  }
}

export async function until(done: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`condition not met in ${ms} ms`);
    await sleep(20);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function resolverFor(port: number): Resolver {
  const resolver = new Resolver({ timeout: 2000, tries: 1 });
  resolver.setServers([`127.0.0.1:${port}`]);
  return resolver;
}

export async function errorCode(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? String(err);
  }
  throw new Error("expected the lookup to fail");
}

/** A port on 127.0.0.1 nothing listens on (UDP and TCP): bound, then released. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
