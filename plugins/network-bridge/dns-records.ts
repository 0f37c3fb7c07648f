/**
 * The socket-free half of the embedded DNS server (`dns-resolver.ts`): the records of one
 * network (container names and aliases → addresses, addresses → name) and the small part of the
 * DNS wire format (RFC 1035, EDNS0 of RFC 6891) the server reads and writes. Everything here is
 * pure, so every malformed input ends as a `DnsFormatError` the server drops, never as a crash.
 */
import { isIP } from "node:net";

export const TYPE_A = 1;
export const TYPE_PTR = 12;
export const TYPE_MX = 15;
export const TYPE_AAAA = 28;
const TYPE_OPT = 41;
export const CLASS_IN = 1;

export const RCODE_NOERROR = 0;
export const RCODE_FORMERR = 1;
export const RCODE_SERVFAIL = 2;
export const RCODE_NOTIMP = 4;
export const RCODE_REFUSED = 5;

/** Docker answers its own records with this TTL; clients cache them as long. */
const OWN_TTL = 600;
/** Without EDNS a UDP answer must fit in 512 bytes (RFC 1035 4.2.1). */
export const CLASSIC_UDP_SIZE = 512;
/** What we tell EDNS clients we accept: the size DNS flag day 2020 settled on. */
const OUR_EDNS_SIZE = 1232;
const MAX_NAME_LENGTH = 255;
const HEADER_LENGTH = 12;

class DnsFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DnsFormatError";
  }
}

export interface DnsQuestion {
  /** Raw label bytes, in the sender's case: echoed back as they came (clients compare them). */
  labels: Buffer[];
  /** Lower-case dotted form without the trailing dot; null if a label holds a dot (no name of ours can). */
  name: string | null;
  type: number;
  klass: number;
}

export interface DnsMessage {
  id: number;
  isResponse: boolean;
  opcode: number;
  /** The RD and CD bits of the query, which a reply copies. */
  recursionDesired: boolean;
  checkingDisabled: boolean;
  rcode: number;
  questionCount: number;
  /** The first question; null when the message has none. */
  question: DnsQuestion | null;
  /** The UDP payload size the sender accepts (EDNS0 OPT record); 0 when it sent no OPT. */
  ednsSize: number;
}

function need(msg: Buffer, offset: number, length: number): void {
  if (offset + length > msg.length) throw new DnsFormatError("message ends early");
}

/** Reads a (possibly compressed) name at `offset`; `end` is where the record goes on. */
function readName(msg: Buffer, offset: number): { labels: Buffer[]; end: number } {
  const labels: Buffer[] = [];
  let length = 0;
  let end = -1;
  let at = offset;
  // A pointer may only go backwards, so a name cannot loop; the count bounds it anyway.
  for (let steps = 0; steps < 256; steps++) {
    need(msg, at, 1);
    const size = msg[at]!;
    if (size === 0) return { labels, end: end < 0 ? at + 1 : end };
    if ((size & 0xc0) === 0xc0) {
      need(msg, at, 2);
      const target = msg.readUInt16BE(at) & 0x3fff;
      if (target >= at) throw new DnsFormatError("name pointer does not point backwards");
      if (end < 0) end = at + 2;
      at = target;
      continue;
    }
    if (size & 0xc0) throw new DnsFormatError("unknown label type");
    need(msg, at + 1, size);
    length += size + 1;
    if (length > MAX_NAME_LENGTH) throw new DnsFormatError("name too long");
    labels.push(msg.subarray(at + 1, at + 1 + size));
    at += size + 1;
  }
  throw new DnsFormatError("name too long");
}

/** DNS compares names in ASCII case only (RFC 4343); other bytes stay as they are. */
function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

function lookupName(labels: Buffer[]): string | null {
  const texts = labels.map((l) => l.toString("latin1"));
  if (texts.some((t) => t.includes("."))) return null;
  return asciiLower(texts.join("."));
}

/** The sender's EDNS0 payload size, from an OPT record in the additional section. */
function readEdnsSize(msg: Buffer, offset: number, answerCount: number, additionalCount: number): number {
  let at = offset;
  for (let i = 0; i < answerCount + additionalCount; i++) {
    const { labels, end } = readName(msg, at);
    need(msg, end, 10);
    const type = msg.readUInt16BE(end);
    const rdataLength = msg.readUInt16BE(end + 8);
    need(msg, end + 10, rdataLength);
    // RFC 6891 6.1.1: below 512 counts as 512.
    if (i >= answerCount && type === TYPE_OPT && labels.length === 0) return Math.max(CLASSIC_UDP_SIZE, msg.readUInt16BE(end + 2));
    at = end + 10 + rdataLength;
  }
  return 0;
}

/** Reads the header, the first question and (for queries) the EDNS payload size. */
export function parseMessage(msg: Buffer): DnsMessage {
  need(msg, 0, HEADER_LENGTH);
  const flags = msg.readUInt16BE(2);
  const questionCount = msg.readUInt16BE(4);
  const message: DnsMessage = {
    id: msg.readUInt16BE(0),
    isResponse: (flags & 0x8000) !== 0,
    opcode: (flags >> 11) & 0x0f,
    recursionDesired: (flags & 0x0100) !== 0,
    checkingDisabled: (flags & 0x0010) !== 0,
    rcode: flags & 0x0f,
    questionCount,
    question: null,
    ednsSize: 0,
  };
  if (questionCount === 0) return message;
  const { labels, end } = readName(msg, HEADER_LENGTH);
  need(msg, end, 4);
  message.question = { labels, name: lookupName(labels), type: msg.readUInt16BE(end), klass: msg.readUInt16BE(end + 2) };
  if (!message.isResponse && questionCount === 1) {
    const answerAndAuthority = msg.readUInt16BE(6) + msg.readUInt16BE(8);
    message.ednsSize = readEdnsSize(msg, end + 4, answerAndAuthority, msg.readUInt16BE(10));
  }
  return message;
}

/** Whether two questions ask the same thing (names compared in ASCII case). */
export function sameQuestion(a: DnsQuestion, b: DnsQuestion): boolean {
  if (a.type !== b.type || a.klass !== b.klass || a.labels.length !== b.labels.length) return false;
  return a.labels.every((label, i) => asciiLower(label.toString("latin1")) === asciiLower(b.labels[i]!.toString("latin1")));
}

export function encodeName(labels: readonly Buffer[]): Buffer {
  const parts: Buffer[] = [];
  for (const label of labels) parts.push(Buffer.from([label.length]), label);
  parts.push(Buffer.from([0]));
  return Buffer.concat(parts);
}

/** `name` as labels; empty labels (from "a..b" or a trailing dot) are left out. */
export function nameLabels(name: string): Buffer[] {
  return name.split(".").filter((l) => l !== "").map((l) => Buffer.from(l, "latin1"));
}

export interface Answer {
  type: number;
  rdata: Buffer;
}

/**
 * A reply to `query` with `answers` (owned by the question's name). Answers that do not fit in
 * `maxSize` are left out and the reply marked truncated, so a UDP client retries over TCP.
 */
export function encodeReply(query: DnsMessage, rcode: number, answers: readonly Answer[], maxSize: number): Buffer {
  const question = query.question;
  const questionBytes = question
    ? Buffer.concat([encodeName(question.labels), u16(question.type), u16(question.klass)])
    : Buffer.alloc(0);
  const opt = query.ednsSize > 0 ? Buffer.from([0, 0, TYPE_OPT, OUR_EDNS_SIZE >> 8, OUR_EDNS_SIZE & 0xff, 0, 0, 0, 0, 0, 0]) : null;
  let size = HEADER_LENGTH + questionBytes.length + (opt?.length ?? 0);
  const records: Buffer[] = [];
  let truncated = false;
  for (const answer of answers) {
    // 0xc00c: a pointer to the question's name, right after the header.
    const record = Buffer.concat([u16(0xc00c), u16(answer.type), u16(CLASS_IN), u32(OWN_TTL), u16(answer.rdata.length), answer.rdata]);
    if (size + record.length > maxSize) {
      truncated = true;
      break;
    }
    size += record.length;
    records.push(record);
  }
  const header = Buffer.alloc(HEADER_LENGTH);
  header.writeUInt16BE(query.id, 0);
  // QR, the query's opcode, RD and CD copied, RA set (as Docker: it recurses through the host's servers).
  let flags = 0x8000 | (query.opcode << 11) | 0x0080 | (rcode & 0x0f);
  if (truncated) flags |= 0x0200;
  if (query.recursionDesired) flags |= 0x0100;
  if (query.checkingDisabled) flags |= 0x0010;
  header.writeUInt16BE(flags, 2);
  header.writeUInt16BE(question ? 1 : 0, 4);
  header.writeUInt16BE(records.length, 6);
  header.writeUInt16BE(opt ? 1 : 0, 10);
  return Buffer.concat([header, questionBytes, ...records, ...(opt ? [opt] : [])]);
}

/** A copy of `msg` with another message id (forwarding uses its own ids upstream). */
export function withId(msg: Buffer, id: number): Buffer {
  const copy = Buffer.from(msg);
  copy.writeUInt16BE(id, 0);
  return copy;
}

function u16(value: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(value);
  return b;
}

function u32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(value);
  return b;
}

/** The 4 or 16 bytes of an IP address (an IPv6 zone such as `%eth0` is ignored). */
export function addressBytes(address: string): Buffer {
  const plain = address.split("%")[0]!;
  const family = isIP(plain);
  if (family === 4) return Buffer.from(plain.split(".").map(Number));
  if (family !== 6) throw new TypeError(`not an IP address: ${address}`);
  let text = plain;
  const tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split(".").map(Number) as [number, number, number, number];
    tail.push((a << 8) | b, (c << 8) | d);
    text = text.slice(0, -dotted[1]!.length) + "0:0"; // two words, overwritten below
  }
  const groups = (part: string): number[] => (part === "" ? [] : part.split(":").map((g) => parseInt(g, 16)));
  const [head, rest] = text.split("::") as [string, string | undefined];
  let words = groups(head);
  if (rest !== undefined) {
    const back = groups(rest);
    words = [...words, ...new Array<number>(8 - words.length - back.length).fill(0), ...back];
  }
  if (tail.length) words.splice(6, 2, ...tail);
  const bytes = Buffer.alloc(16);
  words.forEach((w, i) => bytes.writeUInt16BE(w, i * 2));
  return bytes;
}

/** The name a PTR query for `address` asks about, lower case, without the trailing dot. */
function reverseName(bytes: Buffer): string {
  if (bytes.length === 4) return `${[...bytes].reverse().join(".")}.in-addr.arpa`;
  const nibbles = [...bytes].flatMap((b) => [(b >> 4).toString(16), (b & 0x0f).toString(16)]);
  return `${nibbles.reverse().join(".")}.ip6.arpa`;
}

/** Names are matched in ASCII lower case and without a trailing dot. */
function normalizeName(name: string): string {
  return asciiLower(name.trim()).replace(/\.$/, "");
}

interface Endpoint {
  names: string[];
  /** Shown in PTR answers: the container's first name as the caller gave it. */
  displayName: string;
  addresses: Buffer[];
}

interface Index {
  byName: Map<string, Endpoint[]>;
  byReverse: Map<string, Endpoint>;
}

/** The names and addresses of the containers of one network. */
export class NetworkRecords {
  private readonly endpoints = new Map<string, Endpoint>();
  /** Rebuilt on the first lookup after a change: containers change rarely, queries come often. */
  private index: Index | null = null;

  get size(): number {
    return this.endpoints.size;
  }

  /** Replaces the container's names and addresses. The first name answers PTR queries. */
  set(containerId: string, names: readonly string[], addresses: readonly string[]): void {
    const normalized = [...new Set(names.map(normalizeName).filter((n) => n !== ""))];
    this.endpoints.set(containerId, {
      names: normalized,
      displayName: names.map((n) => n.trim().replace(/\.$/, "")).find((n) => n !== "") ?? "",
      addresses: addresses.map(addressBytes),
    });
    this.index = null;
  }

  remove(containerId: string): void {
    if (this.endpoints.delete(containerId)) this.index = null;
  }

  /** The container's addresses, as bytes (for the resolver's per-client settings). */
  addressesOf(containerId: string): Buffer[] {
    return this.endpoints.get(containerId)?.addresses ?? [];
  }

  /**
   * The addresses of the family (4 or 16 bytes) of every container named `name`; null when no
   * container of this network has that name, an empty list when they have no such address.
   */
  addresses(name: string, byteLength: 4 | 16): Buffer[] | null {
    const endpoints = this.lookup().byName.get(normalizeName(name));
    if (!endpoints) return null;
    const unique = new Map<string, Buffer>();
    for (const e of endpoints) for (const a of e.addresses) if (a.length === byteLength) unique.set(a.toString("hex"), a);
    return [...unique.values()];
  }

  /** The container name for a PTR query name (`4.3.2.1.in-addr.arpa`); null if not ours. */
  nameOf(ptrName: string): string | null {
    return this.lookup().byReverse.get(normalizeName(ptrName))?.displayName || null;
  }

  private lookup(): Index {
    if (this.index) return this.index;
    const index: Index = { byName: new Map(), byReverse: new Map() };
    for (const endpoint of this.endpoints.values()) {
      for (const name of endpoint.names) {
        const list = index.byName.get(name);
        if (list) list.push(endpoint);
        else index.byName.set(name, [endpoint]);
      }
      for (const address of endpoint.addresses) index.byReverse.set(reverseName(address), endpoint);
    }
    this.index = index;
    return index;
  }
}
