/**
 * The embedded DNS server of user-defined networks, as Docker's: containers resolve each other
 * by container name, alias and short id, and every other question goes on to the host's own
 * resolvers. It runs in the daemon, on the gateway address of each network (UDP and TCP), so it
 * reaches the host's resolvers even when they are loopback addresses (127.0.0.53) that a
 * container could not reach itself. Records and wire format live in `dns-records.ts`.
 */
import { randomInt } from "node:crypto";
import { closeSync } from "node:fs";
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { connect, createServer, isIP, type Server, type Socket } from "node:net";
import {
  addressBytes,
  CLASS_IN,
  CLASSIC_UDP_SIZE,
  encodeName,
  encodeReply,
  nameLabels,
  NetworkRecords,
  parseMessage,
  RCODE_FORMERR,
  RCODE_NOERROR,
  RCODE_NOTIMP,
  RCODE_REFUSED,
  RCODE_SERVFAIL,
  sameQuestion,
  TYPE_A,
  TYPE_AAAA,
  TYPE_MX,
  TYPE_PTR,
  withId,
  type Answer,
  type DnsMessage,
} from "./dns-records.js";

export interface DnsUpstream {
  address: string;
  /** Default 53. */
  port?: number;
}

export interface ResolverOptions {
  upstreams: DnsUpstream[];
  /** How long one upstream gets to answer before the next is asked; default 2000 ms. */
  timeoutMs?: number;
  /** A TCP connection without traffic is closed after this long; default 10 s, as Docker. */
  tcpIdleMs?: number;
  /** Socket errors that do not stop the server (a failed reply, a listening socket's error). */
  onError?: (err: Error) => void;
}

const DEFAULT_PORT = 53;
const MAX_TCP_MESSAGE = 0xffff;
/** Docker's bound on queries forwarded at once; beyond it a query gets SERVFAIL. */
const MAX_CONCURRENT_FORWARDS = 1024;
/** A TCP client may have this many queries in flight before we stop reading from it. */
const MAX_PENDING_PER_CONNECTION = 32;
const MAX_TCP_CONNECTIONS = 512;
/**
 * Only with port 0: the free UDP port may be taken for TCP (an outgoing connection, or one in
 * TIME-WAIT, holds it), so another port is tried.
 */
const BIND_ATTEMPTS = 10;

type Transport = "udp" | "tcp";

interface Listener {
  address: string;
  port: number;
  udp: UdpSocket;
  tcp: Server;
  connections: Set<Socket>;
  /** Aborts the forwards in flight when the listener closes, so none outlives it. */
  stop: AbortController;
  /** A listener in one container's own namespace: every question on it is that container's. */
  containerId?: string;
}

export class EmbeddedDns {
  private upstreams: DnsUpstream[];
  private readonly timeoutMs: number;
  private readonly tcpIdleMs: number;
  private readonly report: (err: Error) => void;
  private readonly records = new Map<string, NetworkRecords>();
  /**
   * By network and client address: which container asks, and its own upstreams (its `--dns`)
   * when it has them. A container's questions are answered from every network it is on, as
   * Docker's per-container resolver does, whichever network's server it asks.
   */
  private readonly clients = new Map<string, { containerId: string; upstreams?: DnsUpstream[] }>();
  /**
   * By network and container (`<network id>/<container id>`): its legacy links' aliases on that
   * network, alias to the name it stands for there. A container's question is looked up in the
   * aliases of all its networks, each on its own network, as Docker's sandbox does.
   */
  private readonly aliases = new Map<string, Map<string, string>>();
  private readonly containerNetworks = new Map<string, Set<string>>();
  /** By container: its own upstreams, for the questions it asks on a listener of its own. */
  private readonly containerUpstreams = new Map<string, DnsUpstream[]>();
  /** By network id: its name, lower case, for the qualified names `<container>.<network>`. */
  private readonly networkNames = new Map<string, string>();
  private readonly listeners = new Map<string, Listener[]>();
  private forwarding = 0;

  constructor(opts: ResolverOptions) {
    this.upstreams = [...opts.upstreams];
    this.timeoutMs = opts.timeoutMs ?? 2000;
    this.tcpIdleMs = opts.tcpIdleMs ?? 10_000;
    this.report = opts.onError ?? (() => undefined);
  }

  /** Starts answering on address:port (UDP + TCP) for `networkId`; resolves with the bound port. */
  async listen(networkId: string, address: string, port = DEFAULT_PORT): Promise<number> {
    if (!isIP(address)) throw new TypeError(`embedded DNS: not an IP address: ${address}`);
    for (let attempt = 1; ; attempt++) {
      const udp = createSocket({ type: isIP(address) === 6 ? "udp6" : "udp4" });
      await bindUdp(udp, address, port);
      udp.on("error", (err) => this.report(err));
      const bound = udp.address().port;
      // Half-open: a client may send its queries and shut its side before the answers are out.
      const tcp = createServer({ allowHalfOpen: true }, (socket) => this.serveTcp(networkId, listener, socket));
      const listener: Listener = { address, port: bound, udp, tcp, connections: new Set(), stop: new AbortController() };
      tcp.maxConnections = MAX_TCP_CONNECTIONS;
      try {
        await listenTcp(tcp, address, bound);
      } catch (err) {
        udp.close();
        if (port === 0 && (err as NodeJS.ErrnoException).code === "EADDRINUSE" && attempt < BIND_ATTEMPTS) continue;
        throw err;
      }
      tcp.on("error", (err) => this.report(err));
      udp.on("message", (msg, peer) => this.serveUdp(networkId, listener, msg, peer.address, peer.port));
      const list = this.listeners.get(networkId) ?? [];
      list.push(listener);
      this.listeners.set(networkId, list);
      return bound;
    }
  }

  /**
   * Starts answering one container on sockets bound in its own namespace (`fds`, IPv4, at
   * `address:port` there; taken over), whichever of its networks a name is on. Closed by
   * `close(sandboxKey(containerId))`.
   */
  async serveSandbox(containerId: string, fds: { udp: number; tcp: number }, address: string, port: number): Promise<void> {
    const key = sandboxKey(containerId);
    const udp = createSocket({ type: "udp4" });
    const tcp = createServer({ allowHalfOpen: true }, (socket) => this.serveTcp(key, listener, socket));
    const listener: Listener = { address, port, udp, tcp, connections: new Set(), stop: new AbortController(), containerId };
    tcp.maxConnections = MAX_TCP_CONNECTIONS;
    // (each takes its descriptor over; one not taken yet is closed here)
    let taken = 0;
    try {
      await opened(udp, () => udp.bind({ fd: fds.udp }));
      taken++;
      await opened(tcp, () => tcp.listen({ fd: fds.tcp }));
      taken++;
    } catch (err) {
      if (taken === 0) closeFd(fds.tcp);
      udp.close();
      throw err;
    }
    udp.on("error", (err) => this.report(err));
    tcp.on("error", (err) => this.report(err));
    udp.on("message", (msg, peer) => this.serveUdp(key, listener, msg, peer.address, peer.port));
    this.listeners.set(key, [...(this.listeners.get(key) ?? []), listener]);
  }

  /** Whether a container has a listener of its own (`serveSandbox`). */
  servesSandbox(containerId: string): boolean {
    return this.listeners.has(sandboxKey(containerId));
  }

  /** Stops answering for the network: its sockets close, its forwards in flight are dropped. */
  async close(networkId: string): Promise<void> {
    const list = this.listeners.get(networkId) ?? [];
    this.listeners.delete(networkId);
    await Promise.all(list.map(closeListener));
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.listeners.keys()].map((id) => this.close(id)));
  }

  /**
   * The names (name, aliases, short id) and addresses of one container on one network; replaces
   * earlier ones. `upstreams`, when given, are where this container's other questions go (asked
   * from one of `addresses`) instead of the default upstreams. `aliases` (legacy links): names
   * only this container resolves, each standing for another name, looked up before the others.
   */
  setEndpoint(networkId: string, containerId: string, names: string[], addresses: string[], upstreams?: DnsUpstream[], aliases?: Record<string, string>): void {
    let network = this.records.get(networkId);
    if (!network) this.records.set(networkId, (network = new NetworkRecords()));
    for (const a of network.addressesOf(containerId)) this.clients.delete(clientKey(networkId, a));
    network.set(containerId, names, addresses);
    const own = aliases && new Map(Object.entries(aliases).map(([alias, name]) => [alias.toLowerCase(), name.toLowerCase()]));
    if (own?.size) this.aliases.set(`${networkId}/${containerId}`, own);
    else this.aliases.delete(`${networkId}/${containerId}`);
    for (const a of addresses) this.clients.set(clientKey(networkId, a), { containerId, ...(upstreams ? { upstreams: [...upstreams] } : {}) });
    if (upstreams) this.containerUpstreams.set(containerId, [...upstreams]);
    const on = this.containerNetworks.get(containerId) ?? new Set<string>();
    this.containerNetworks.set(containerId, on.add(networkId));
  }

  /** The network's name: its containers are found as `<name>.<network name>` too. */
  setNetworkName(networkId: string, name: string): void {
    this.networkNames.set(networkId, name.toLowerCase());
  }

  removeEndpoint(networkId: string, containerId: string): void {
    this.aliases.delete(`${networkId}/${containerId}`);
    const network = this.records.get(networkId);
    for (const a of network?.addressesOf(containerId) ?? []) this.clients.delete(clientKey(networkId, a));
    network?.remove(containerId);
    if (network?.size === 0) this.records.delete(networkId);
    const on = this.containerNetworks.get(containerId);
    on?.delete(networkId);
    if (on?.size === 0) {
      this.containerNetworks.delete(containerId);
      this.containerUpstreams.delete(containerId);
    }
  }

  setUpstreams(upstreams: DnsUpstream[]): void {
    this.upstreams = [...upstreams];
  }

  private serveUdp(networkId: string, listener: Listener, msg: Buffer, address: string, port: number): void {
    this.answer(networkId, listener, msg, "udp", address).then(
      (reply) => {
        if (!reply || listener.stop.signal.aborted) return;
        listener.udp.send(reply, port, address, (err) => err && this.report(err));
      },
      (err: Error) => this.report(err),
    );
  }

  /** Length-prefixed messages (RFC 1035 4.2.2), several per connection, answered as they complete. */
  private serveTcp(networkId: string, listener: Listener, socket: Socket): void {
    listener.connections.add(socket);
    socket.on("close", () => listener.connections.delete(socket));
    socket.on("error", () => socket.destroy());
    socket.setNoDelay(true);
    let buffered: Buffer = Buffer.alloc(0);
    let pending = 0;
    let ended = false;
    // Answers each complete message; with too many in flight, reading waits for answers to go out.
    const drain = (): void => {
      while (pending < MAX_PENDING_PER_CONNECTION && buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const msg = buffered.subarray(2, 2 + buffered.readUInt16BE(0));
        buffered = buffered.subarray(2 + msg.length);
        pending++;
        this.answer(networkId, listener, msg, "tcp", socket.remoteAddress ?? "")
          .then(
            (reply) => {
              if (reply && reply.length <= MAX_TCP_MESSAGE && socket.writable) socket.write(Buffer.concat([u16(reply.length), reply]));
            },
            (err: Error) => this.report(err),
          )
          .finally(() => {
            pending--;
            drain();
          });
      }
      if (pending >= MAX_PENDING_PER_CONNECTION) socket.pause();
      else if (!socket.destroyed) socket.resume();
      if (ended && pending === 0) socket.end();
    };
    // Idle means no bytes either way; a query still waiting on an upstream keeps it open.
    socket.setTimeout(this.tcpIdleMs, () => {
      if (pending === 0) socket.destroy();
    });
    socket.on("end", () => {
      ended = true;
      drain();
    });
    socket.on("data", (chunk: Buffer) => {
      buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
      drain();
    });
  }

  /** The reply to one message, or null to drop it (malformed, or not a query). */
  private async answer(networkId: string, listener: Listener, msg: Buffer, transport: Transport, client: string): Promise<Buffer | null> {
    let query: DnsMessage;
    try {
      query = parseMessage(msg);
    } catch {
      return null;
    }
    if (query.isResponse || !query.question) return null;
    const maxSize = transport === "tcp" ? MAX_TCP_MESSAGE : Math.max(CLASSIC_UDP_SIZE, query.ednsSize);
    if (query.opcode !== 0) return encodeReply(query, RCODE_NOTIMP, [], maxSize);
    if (query.questionCount !== 1) return encodeReply(query, RCODE_FORMERR, [], maxSize);
    const own = listener.containerId;
    const asker = own ? { containerId: own, upstreams: this.containerUpstreams.get(own) } : this.clients.get(clientKey(networkId, client));
    // the asking network first: its names win over the same names on the container's other networks
    // (on a container's own listener, its networks in the order it joined them)
    const scope = own ? [...(this.containerNetworks.get(own) ?? [])] : [networkId, ...[...(asker ? this.containerNetworks.get(asker.containerId) ?? [] : [])].filter((n) => n !== networkId)];
    // a link's alias stands for the linked container's name, for this container only
    const known = this.linkAnswers(scope, query, asker?.containerId) ?? this.ownAnswers(scope, query);
    if (known) return encodeReply(query, RCODE_NOERROR, known, maxSize);
    const upstreams = asker?.upstreams ?? this.upstreams;
    const relayed = await this.forward(msg, query, transport, upstreams, listener.stop.signal);
    if (listener.stop.signal.aborted) return null;
    return relayed ?? encodeReply(query, RCODE_SERVFAIL, [], maxSize);
  }

  /**
   * The answers from the records of the first of `networkIds` that knows the name; null when none
   * does. Then, as Docker's sandbox resolves `a.b.c`: `a.b` on a network of the asker's named `c`,
   * then `a` on one named `b.c` (a container found by its name qualified with its network's).
   */
  private ownAnswers(networkIds: readonly string[], query: DnsMessage): Answer[] | null {
    for (const id of networkIds) {
      const network = this.records.get(id);
      const answers = network ? this.answersOf(network, query, query.question!.name) : null;
      if (answers) return answers;
    }
    const full = query.question!.name?.toLowerCase().replace(/\.$/, "");
    for (let dot = full?.lastIndexOf(".") ?? -1; full && dot > 0; dot = full.lastIndexOf(".", dot - 1)) {
      const [name, networkName] = [full.slice(0, dot), full.slice(dot + 1)];
      for (const id of networkIds) {
        const network = this.networkNames.get(id) === networkName ? this.records.get(id) : undefined;
        const answers = network ? this.answersOf(network, query, name) : null;
        if (answers) return answers;
      }
    }
    return null;
  }

  /** A legacy link's alias of the asker on one of its networks: the linked name, on that network. */
  private linkAnswers(networkIds: readonly string[], query: DnsMessage, containerId: string | undefined): Answer[] | null {
    const asked = query.question!.name;
    if (!containerId || asked === null) return null;
    for (const id of networkIds) {
      const target = this.aliases.get(`${id}/${containerId}`)?.get(asked.toLowerCase());
      const network = target ? this.records.get(id) : undefined;
      const answers = network ? this.answersOf(network, query, target!) : null;
      if (answers) return answers;
    }
    return null;
  }

  /** `name`: what the question's name is looked up as (a link's alias is looked up as its target). */
  private answersOf(network: NetworkRecords, query: DnsMessage, name: string | null): Answer[] | null {
    const question = query.question!;
    if (name === null || question.klass !== CLASS_IN) return null;
    switch (question.type) {
      case TYPE_A:
      case TYPE_AAAA: {
        const type = question.type;
        const addresses = network.addresses(name, type === TYPE_A ? 4 : 16);
        return addresses && shuffle(addresses).map((rdata) => ({ type, rdata }));
      }
      case TYPE_PTR: {
        const owner = network.nameOf(name);
        return owner ? [{ type: TYPE_PTR, rdata: encodeName(nameLabels(owner)) }] : null;
      }
      case TYPE_MX: {
        // As Docker: a known name has no MX, and an empty NOERROR lets mail clients fall back to
        // its A/AAAA (RFC 5321 5.1) without asking the host's servers about a container name.
        const known = network.addresses(name, 4) ?? network.addresses(name, 16);
        return known ? [] : null;
      }
      default:
        return null;
    }
  }

  /**
   * Asks the upstreams in order, the next on timeout, error, SERVFAIL or REFUSED (as Docker);
   * the first other answer comes back as it came, with the client's id. Null when none answered.
   */
  private async forward(msg: Buffer, query: DnsMessage, transport: Transport, upstreams: readonly DnsUpstream[], signal: AbortSignal): Promise<Buffer | null> {
    if (this.forwarding >= MAX_CONCURRENT_FORWARDS) return null;
    this.forwarding++;
    try {
      for (const upstream of upstreams) {
        if (signal.aborted) return null;
        const port = upstream.port ?? DEFAULT_PORT;
        // An upstream that is one of our own listeners would forward to itself for ever.
        if (this.isOwnListener(upstream.address, port)) continue;
        const id = randomInt(0x10000);
        const ask = transport === "udp" ? exchangeUdp : exchangeTcp;
        let reply: Buffer;
        try {
          reply = await ask(upstream.address, port, withId(msg, id), this.timeoutMs, signal, (r) => isReplyTo(r, id, query));
        } catch {
          continue;
        }
        const rcode = reply[3]! & 0x0f;
        if (rcode === RCODE_SERVFAIL || rcode === RCODE_REFUSED) continue;
        return withId(reply, query.id);
      }
      return null;
    } finally {
      this.forwarding--;
    }
  }

  private isOwnListener(address: string, port: number): boolean {
    for (const list of this.listeners.values()) for (const l of list) if (l.port === port && l.address === address) return true;
    return false;
  }
}

/** The listeners of one container's own namespace, among the networks' (no network id looks like it). */
export function sandboxKey(containerId: string): string {
  return `sandbox ${containerId}`;
}

/** Resolves once `start` made the socket listen (`listening`), rejects with its first error. */
function opened(socket: UdpSocket | Server, start: () => void): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once("error", reject);
    socket.once("listening", () => {
      socket.off("error", reject);
      resolve();
    });
    start();
  });
}

function closeFd(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}

/** A client by network and address; the address as bytes, so that any spelling of it matches. */
function clientKey(networkId: string, address: string | Buffer): string {
  try {
    const bytes = typeof address === "string" ? addressBytes(address.replace(/^::ffff:(?=\d+\.)/i, "")) : address;
    return `${networkId} ${bytes.toString("hex")}`;
  } catch {
    return `${networkId} ?`;
  }
}

/** The nameservers of a resolv.conf text (IPv4 and IPv6, in order). */
export function nameserversOf(resolvConf: string): string[] {
  const servers: string[] = [];
  for (const line of resolvConf.split("\n")) {
    const [keyword, address] = line.trim().split(/\s+/);
    if (keyword === "nameserver" && address && isIP(address.split("%")[0]!)) servers.push(address);
  }
  return servers;
}

/** A reply we sent the query for: our id, a response, and the same question (when it has one). */
function isReplyTo(reply: Buffer, id: number, query: DnsMessage): boolean {
  try {
    const parsed = parseMessage(reply);
    if (!parsed.isResponse || parsed.id !== id) return false;
    // Servers may leave the question out of an error reply.
    return parsed.question ? sameQuestion(parsed.question, query.question!) : parsed.rcode !== RCODE_NOERROR;
  } catch {
    return false;
  }
}

type Exchange = (
  address: string,
  port: number,
  msg: Buffer,
  timeoutMs: number,
  signal: AbortSignal,
  accept: (reply: Buffer) => boolean,
) => Promise<Buffer>;

/**
 * One query on a fresh connected socket: a random source port and id for every query (against
 * spoofed answers), and an ICMP "port unreachable" ends the try at once instead of at the timeout.
 */
const exchangeUdp: Exchange = (address, port, msg, timeoutMs, signal, accept) =>
  withDeadline(timeoutMs, signal, (resolve, reject, onCleanup) => {
    const socket = createSocket({ type: isIP(address.split("%")[0]!) === 6 ? "udp6" : "udp4" });
    onCleanup(() => socket.close());
    socket.on("error", reject);
    socket.on("message", (reply) => {
      if (accept(reply)) resolve(reply);
    });
    socket.connect(port, address, (err?: Error) => (err ? reject(err) : socket.send(msg, (e) => e && reject(e))));
  });

const exchangeTcp: Exchange = (address, port, msg, timeoutMs, signal, accept) =>
  withDeadline(timeoutMs, signal, (resolve, reject, onCleanup) => {
    const socket = connect({ host: address, port, noDelay: true });
    onCleanup(() => socket.destroy());
    let buffered: Buffer = Buffer.alloc(0);
    socket.on("error", reject);
    socket.on("close", () => reject(new Error("upstream closed the connection")));
    socket.on("connect", () => socket.write(Buffer.concat([u16(msg.length), msg])));
    socket.on("data", (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const reply = buffered.subarray(2, 2 + buffered.readUInt16BE(0));
        buffered = buffered.subarray(2 + reply.length);
        if (accept(reply)) return resolve(Buffer.from(reply));
      }
    });
  });

/** Runs `start` until it settles, the time is up or `signal` aborts; cleans up in every case. */
function withDeadline<T>(
  timeoutMs: number,
  signal: AbortSignal,
  start: (resolve: (value: T) => void, reject: (err: Error) => void, onCleanup: (fn: () => void) => void) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const cleanups: (() => void)[] = [];
    let settled = false;
    const settle = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      for (const cleanup of cleanups) {
        try {
          cleanup();
        } catch {
          // already closed
        }
      }
      fn();
    };
    const onAbort = (): void => settle(() => reject(new Error("aborted")));
    const timer = setTimeout(() => settle(() => reject(new Error(`no answer in ${timeoutMs} ms`))), timeoutMs);
    signal.addEventListener("abort", onAbort);
    try {
      start(
        (value) => settle(() => resolve(value)),
        (err) => settle(() => reject(err)),
        (fn) => cleanups.push(fn),
      );
    } catch (err) {
      settle(() => reject(err as Error));
    }
    if (signal.aborted) onAbort();
  });
}

function bindUdp(socket: UdpSocket, address: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => {
      socket.close();
      reject(err);
    };
    socket.once("error", onError);
    socket.bind({ address, port, exclusive: true }, () => {
      socket.off("error", onError);
      resolve();
    });
  });
}

function listenTcp(server: Server, address: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host: address, port, exclusive: true }, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

function closeListener(listener: Listener): Promise<void> {
  listener.stop.abort();
  try {
    listener.udp.close();
  } catch {
    // already closed
  }
  for (const socket of listener.connections) socket.destroy();
  return new Promise((resolve) => listener.tcp.close(() => resolve()));
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

function u16(value: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(value);
  return b;
}
