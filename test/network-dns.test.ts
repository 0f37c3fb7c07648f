/**
 * The embedded DNS server of user-defined networks (plugins/network-bridge/dns-resolver.ts), on
 * loopback only: it listens on 127.0.0.1 with a port of its own, and its "host resolvers" are
 * small DNS servers this suite runs on 127.0.0.1 (test/helpers/dns-wire.ts), which answer one
 * made-up name and count what they are asked. Queries go through Node's resolver (c-ares, a real
 * client) and as raw UDP and TCP packets built there, independently of the code under test.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { createSocket } from "node:dgram";
import { createServer } from "node:net";
import { EmbeddedDns, nameserversOf } from "../plugins/network-bridge/dns-resolver.js";
import {
  closedPort,
  errorCode,
  parseReply,
  queryPacket,
  readQuestionName,
  resolverFor,
  sleep,
  TcpClient,
  TestUpstream,
  TYPE_A,
  TYPE_AAAA,
  TYPE_MX,
  TYPE_TXT,
  u16,
  udpExchange,
  udpQuery,
  until,
  UPSTREAM_ADDRESS,
  UPSTREAM_NAME,
  withAdditional,
} from "./helpers/dns-wire.js";

const TIMEOUT_MS = 300;
const IDLE_MS = 400;

describe("network bridge: embedded DNS", function () {
  this.timeout(15_000);
  let good: TestUpstream;
  let silent: TestUpstream;
  let failing: TestUpstream;
  let lying: TestUpstream;
  let dns: EmbeddedDns;
  let port1: number;
  let port2: number;
  const errors: Error[] = [];

  before(async () => {
    good = await new TestUpstream("answer").start();
    silent = await new TestUpstream("silent").start();
    failing = await new TestUpstream("servfail").start();
    lying = await new TestUpstream("wrong-id").start();
    dns = new EmbeddedDns({ upstreams: [good.upstream], timeoutMs: TIMEOUT_MS, tcpIdleMs: IDLE_MS, onError: (e) => errors.push(e) });
    port1 = await dns.listen("net1", "127.0.0.1", 0);
    port2 = await dns.listen("net2", "127.0.0.1", 0);
    dns.setEndpoint("net1", "c1", ["web", "WebAlias", "c1c1c1c1c1c1"], ["172.30.0.2", "fd00:30::2"]);
    dns.setEndpoint("net1", "c2", ["db", "shared"], ["172.30.0.3"]);
    dns.setEndpoint("net1", "c3", ["api", "shared"], ["172.30.0.4"]);
    dns.setEndpoint("net2", "c9", ["other"], ["172.31.0.2"]);
  });

  beforeEach(() => {
    dns.setUpstreams([good.upstream]);
    for (const u of [good, silent, failing, lying]) u.reset();
  });

  after(async () => {
    await dns?.closeAll();
    await Promise.all([good, silent, failing, lying].map((u) => u?.stop()));
  });

  it("answers A and AAAA for a container name, without asking upstream", async () => {
    const resolver = resolverFor(port1);
    expect(await resolver.resolve4("web")).to.deep.equal(["172.30.0.2"]);
    expect(await resolver.resolve6("web")).to.deep.equal(["fd00:30::2"]);
    expect(await resolver.resolve4("c1c1c1c1c1c1")).to.deep.equal(["172.30.0.2"]);
    expect(good.udpQueries).to.equal(0);
  });

  it("answers aliases in any case and with a trailing dot, with Docker's TTL", async () => {
    const resolver = resolverFor(port1);
    expect(await resolver.resolve4("webalias")).to.deep.equal(["172.30.0.2"]);
    expect(await resolver.resolve4("WEB")).to.deep.equal(["172.30.0.2"]);
    expect(await resolver.resolve4("web.")).to.deep.equal(["172.30.0.2"]);
    const { reply } = await udpQuery(port1, queryPacket(7, "wEbAlIaS", TYPE_A));
    const parsed = parseReply(reply);
    expect(parsed.id).to.equal(7);
    expect(parsed.recursionAvailable).to.equal(true);
    expect(parsed.answers.map((a) => [a.ttl, [...a.rdata].join(".")])).to.deep.equal([[600, "172.30.0.2"]]);
    // The question comes back in the client's case (clients compare it with theirs).
    expect(readQuestionName(reply)).to.equal("wEbAlIaS");
    expect(good.udpQueries).to.equal(0);
  });

  it("answers every container of a shared alias", async () => {
    expect((await resolverFor(port1).resolve4("shared")).sort()).to.deep.equal(["172.30.0.3", "172.30.0.4"]);
  });

  it("answers NOERROR without records for a known name without that family", async () => {
    expect(await errorCode(resolverFor(port1).resolve6("db"))).to.equal("ENODATA");
    const parsed = parseReply((await udpQuery(port1, queryPacket(9, "db", TYPE_AAAA))).reply);
    expect(parsed.rcode).to.equal(0);
    expect(parsed.answers).to.have.length(0);
    // MX for a container name: empty NOERROR, as Docker (and nothing leaks upstream).
    expect(parseReply((await udpQuery(port1, queryPacket(10, "db", TYPE_MX))).reply)).to.include({ rcode: 0 });
    expect(good.udpQueries).to.equal(0);
  });

  it("answers PTR queries for container addresses (IPv4 and IPv6)", async () => {
    const resolver = resolverFor(port1);
    expect(await resolver.reverse("172.30.0.3")).to.deep.equal(["db"]);
    expect(await resolver.reverse("172.30.0.2")).to.deep.equal(["web"]);
    expect(await resolver.reverse("fd00:30::2")).to.deep.equal(["web"]);
    expect(good.udpQueries).to.equal(0);
    // An address that is not a container's goes upstream.
    expect(await errorCode(resolver.reverse("172.30.0.99"))).to.equal("ENOTFOUND");
    expect(good.udpQueries).to.equal(1);
  });

  it("does not answer names of another network from its records", async () => {
    expect(await errorCode(resolverFor(port1).resolve4("other"))).to.equal("ENOTFOUND");
    expect(good.udpQueries).to.equal(1);
    expect(await errorCode(resolverFor(port1).reverse("172.31.0.2"))).to.equal("ENOTFOUND");
    expect(await resolverFor(port2).resolve4("other")).to.deep.equal(["172.31.0.2"]);
    expect(await errorCode(resolverFor(port2).resolve4("web"))).to.equal("ENOTFOUND");
  });

  it("forwards other names and types, relaying the upstream answer unchanged with the client's id", async () => {
    expect(await resolverFor(port1).resolve4(UPSTREAM_NAME)).to.deep.equal(["10.1.2.3"]);
    expect(good.udpQueries).to.equal(1);
    const { reply } = await udpQuery(port1, queryPacket(0xbeef, UPSTREAM_NAME, TYPE_A));
    expect(reply.readUInt16BE(0)).to.equal(0xbeef);
    expect(reply.subarray(2).equals(good.lastReply!.subarray(2))).to.equal(true);
    // Another type for a container name is the upstream's business too.
    expect(parseReply((await udpQuery(port1, queryPacket(3, "web", TYPE_TXT))).reply).rcode).to.equal(3);
    expect(good.udpQueries).to.equal(3);
  });

  it("asks the next upstream when one times out, answers SERVFAIL or answers with the wrong id", async () => {
    dns.setUpstreams([silent.upstream, failing.upstream, lying.upstream, good.upstream]);
    const started = Date.now();
    expect(await resolverFor(port1).resolve4(UPSTREAM_NAME)).to.deep.equal(["10.1.2.3"]);
    const ms = Date.now() - started;
    expect([silent.udpQueries, failing.udpQueries, lying.udpQueries, good.udpQueries]).to.deep.equal([1, 1, 1, 1]);
    // Two timeouts (silent, and lying whose answer does not count), no wait for SERVFAIL.
    expect(ms).to.be.within(2 * TIMEOUT_MS - 20, 4 * TIMEOUT_MS);
  });

  it("answers SERVFAIL in bounded time when no upstream answers", async () => {
    dns.setUpstreams([silent.upstream, { address: "127.0.0.1", port: await closedPort() }, failing.upstream]);
    const { reply, ms } = await udpQuery(port1, queryPacket(11, UPSTREAM_NAME, TYPE_A));
    expect(parseReply(reply)).to.include({ id: 11, rcode: 2 });
    // One timeout; the closed port is refused at once (ICMP), the SERVFAIL comes back at once.
    expect(ms).to.be.within(TIMEOUT_MS - 20, 3 * TIMEOUT_MS);
    expect(await errorCode(resolverFor(port1).resolve4(UPSTREAM_NAME))).to.equal("ESERVFAIL");
    dns.setUpstreams([]);
    const none = await udpQuery(port1, queryPacket(12, UPSTREAM_NAME, TYPE_A));
    expect(parseReply(none.reply)).to.include({ id: 12, rcode: 2 });
    expect(none.ms).to.be.below(TIMEOUT_MS);
  });

  it("goes to the next upstream at once when one refuses the connection", async () => {
    dns.setUpstreams([{ address: "127.0.0.1", port: await closedPort() }, good.upstream]);
    const { reply, ms } = await udpQuery(port1, queryPacket(13, UPSTREAM_NAME, TYPE_A));
    expect(parseReply(reply)).to.include({ id: 13, rcode: 0 });
    expect(ms).to.be.below(TIMEOUT_MS / 2);
    const client = new TcpClient(port1);
    try {
      const started = Date.now();
      client.send(queryPacket(14, UPSTREAM_NAME, TYPE_A));
      expect(parseReply((await client.waitFor(1))[0]!)).to.include({ id: 14, rcode: 0 });
      expect(Date.now() - started).to.be.below(TIMEOUT_MS / 2);
    } finally {
      client.destroy();
    }
  });

  it("skips an upstream that is its own listener instead of looping", async () => {
    dns.setUpstreams([{ address: "127.0.0.1", port: port1 }, good.upstream]);
    expect(await resolverFor(port1).resolve4(UPSTREAM_NAME)).to.deep.equal(["10.1.2.3"]);
    expect(good.udpQueries).to.equal(1);
  });

  it("answers several queries on one TCP connection and forwards over TCP", async () => {
    const client = new TcpClient(port1);
    try {
      client.send(queryPacket(21, "web", TYPE_A), queryPacket(22, UPSTREAM_NAME, TYPE_A));
      const replies = (await client.waitFor(2)).map(parseReply).sort((a, b) => a.id - b.id);
      expect(replies.map((r) => [r.id, r.rcode, r.answers.map((a) => [...a.rdata].join("."))])).to.deep.equal([
        [21, 0, ["172.30.0.2"]],
        [22, 0, ["10.1.2.3"]],
      ]);
      expect([good.tcpQueries, good.udpQueries]).to.deep.equal([1, 0]);
      // Later on the same connection, and one message split over two writes.
      const later = queryPacket(23, "db", TYPE_A);
      const framed = Buffer.concat([u16(later.length), later]);
      client.socket.write(framed.subarray(0, 5));
      await sleep(50);
      client.socket.write(framed.subarray(5));
      expect(parseReply((await client.waitFor(3))[2]!)).to.deep.include({ id: 23, rcode: 0 });
      expect(client.closed).to.equal(false);
    } finally {
      client.destroy();
    }
  });

  it("answers every query of a long TCP pipeline, also after the client shut its side", async () => {
    const client = new TcpClient(port1);
    try {
      const ids = Array.from({ length: 100 }, (_, i) => 1000 + i);
      // One in ten forwarded: each is a TCP connection upstream (and a TIME-WAIT port after it).
      client.send(...ids.map((id) => queryPacket(id, id % 10 ? "web" : UPSTREAM_NAME, TYPE_A)));
      client.socket.end(); // half-close: the answers still come
      const replies = (await client.waitFor(100)).map(parseReply);
      expect(replies.map((r) => r.id).sort()).to.deep.equal(ids);
      expect(replies.every((r) => r.rcode === 0 && r.answers.length === 1)).to.equal(true);
      await until(() => client.closed, 2000);
    } finally {
      client.destroy();
    }
  });

  it("closes idle TCP connections", async () => {
    const client = new TcpClient(port1);
    try {
      const started = Date.now();
      await until(() => client.closed, 5 * IDLE_MS);
      expect(Date.now() - started).to.be.at.least(IDLE_MS - 50);
    } finally {
      client.destroy();
    }
  });

  it("truncates a UDP answer that does not fit and gives all of it over TCP", async () => {
    const many = Array.from({ length: 40 }, (_, i) => `172.30.1.${i + 1}`);
    many.forEach((address, i) => dns.setEndpoint("net1", `m${i}`, [`m${i}`, "many"], [address]));
    const client = new TcpClient(port1);
    try {
      const { reply } = await udpQuery(port1, queryPacket(31, "many", TYPE_A));
      const udp = parseReply(reply);
      expect(reply.length).to.be.at.most(512);
      expect(udp.truncated).to.equal(true);
      expect(udp.answers.length).to.be.within(1, 39);
      // An EDNS client with room for everything gets everything over UDP.
      const big = parseReply((await udpQuery(port1, queryPacket(32, "many", TYPE_A, { edns: 4096 }))).reply);
      expect([big.truncated, big.answers.length]).to.deep.equal([false, 40]);
      expect((await resolverFor(port1).resolve4("many")).sort()).to.deep.equal([...many].sort());
      client.send(queryPacket(33, "many", TYPE_A));
      const tcp = parseReply((await client.waitFor(1))[0]!);
      expect(tcp.truncated).to.equal(false);
      expect(tcp.answers.map((a) => [...a.rdata].join(".")).sort()).to.deep.equal([...many].sort());
    } finally {
      client.destroy();
      many.forEach((_, i) => dns.removeEndpoint("net1", `m${i}`));
    }
  });

  it("drops malformed packets and goes on answering", async () => {
    const header = (qdcount: number, flags = 0x0100): Buffer => Buffer.concat([u16(0x4444), u16(flags), u16(qdcount), Buffer.alloc(6)]);
    const malformed = [
      Buffer.alloc(0),
      Buffer.from([1, 2, 3]),
      header(1), // a question announced, none there
      Buffer.concat([header(1), Buffer.from([0xc0, 0x0c, 0, 1, 0, 1])]), // a name pointing at itself
      Buffer.concat([header(1), Buffer.from([63, 0x61, 0x62])]), // a label longer than the packet
      Buffer.concat([header(1), Buffer.from([0x40, 0x61, 0, 0, 1, 0, 1])]), // a reserved label type
      Buffer.concat([header(0)]), // no question
      queryPacket(0x4444, UPSTREAM_NAME, TYPE_A).fill(0x81, 2, 3), // a response, not a query
      Buffer.concat([withAdditional(queryPacket(0x4444, "web", TYPE_A)), Buffer.from([0, 0, 41])]), // an OPT record cut short
    ];
    const replies = await udpExchange(port1, [...malformed, queryPacket(41, "web", TYPE_A)], 300);
    expect(replies.map((r) => parseReply(r).id)).to.deep.equal([41]);
    expect(good.udpQueries).to.equal(0);
    // Queries it cannot serve get an error code rather than silence.
    expect(parseReply((await udpQuery(port1, queryPacket(42, "web", TYPE_A, { opcode: 2 }))).reply).rcode).to.equal(4);
    expect(parseReply((await udpQuery(port1, queryPacket(43, "web", TYPE_A, { questions: 2 }))).reply).rcode).to.equal(1);
    // The same over TCP: garbage frames, then a query on the same connection.
    const client = new TcpClient(port1);
    try {
      client.send(...malformed, queryPacket(44, "web", TYPE_A));
      expect((await client.waitFor(1)).map((r) => parseReply(r).id)).to.deep.equal([44]);
    } finally {
      client.destroy();
    }
    expect(await resolverFor(port1).resolve4("web")).to.deep.equal(["172.30.0.2"]);
    expect(errors).to.deep.equal([]);
  });

  it("replaces a container's names and forgets a removed one", async () => {
    const resolver = resolverFor(port1);
    dns.setEndpoint("net1", "c5", ["temp", "tempalias"], ["172.30.0.5"]);
    expect(await resolver.resolve4("tempalias")).to.deep.equal(["172.30.0.5"]);
    dns.setEndpoint("net1", "c5", ["temp"], ["172.30.0.6"]);
    expect(await resolver.resolve4("temp")).to.deep.equal(["172.30.0.6"]);
    expect(await errorCode(resolver.resolve4("tempalias"))).to.equal("ENOTFOUND");
    dns.removeEndpoint("net1", "c5");
    expect(await errorCode(resolver.resolve4("temp"))).to.equal("ENOTFOUND");
    expect(await errorCode(resolver.reverse("172.30.0.6"))).to.equal("ENOTFOUND");
    expect(good.udpQueries).to.equal(3);
    dns.removeEndpoint("net1", "never-there");
  });

  it("frees the port on close", async () => {
    const extra = new EmbeddedDns({ upstreams: [good.upstream], timeoutMs: TIMEOUT_MS });
    const port = await extra.listen("net3", "127.0.0.1", 0);
    extra.setEndpoint("net3", "c1", ["x"], ["172.32.0.2"]);
    expect(await resolverFor(port).resolve4("x")).to.deep.equal(["172.32.0.2"]);
    const idle = new TcpClient(port); // an open connection must not keep the port
    await sleep(50);
    await extra.close("net3");
    await until(() => idle.closed, 1000);
    const udp = createSocket("udp4");
    const tcp = createServer();
    try {
      await new Promise<void>((resolve, reject) => {
        udp.once("error", reject);
        udp.bind(port, "127.0.0.1", resolve);
      });
      await new Promise<void>((resolve, reject) => {
        tcp.once("error", reject);
        tcp.listen(port, "127.0.0.1", resolve);
      });
    } finally {
      udp.close();
      await new Promise((resolve) => tcp.close(resolve));
      idle.destroy();
      await extra.closeAll();
    }
    // A second listen on a taken port fails, and leaves nothing half-open behind.
    const taken = new EmbeddedDns({ upstreams: [] });
    try {
      const error = await taken.listen("net1", "127.0.0.1", port1).then(() => null, (e: NodeJS.ErrnoException) => e.code);
      expect(error).to.equal("EADDRINUSE");
    } finally {
      await taken.closeAll();
    }
  });

  it("answers a container from every network it is on, and sends its other names to its own servers", async () => {
    // the asking container is this suite's own address, on net2 (with servers of its own) and net1
    const own = await new TestUpstream("answer").start();
    try {
      dns.setEndpoint("net2", "asker", ["asker"], ["127.0.0.1"], [own.upstream]);
      dns.setEndpoint("net1", "asker", ["asker"], ["127.0.0.1"]);
      expect(await resolverFor(port2).resolve4("web")).to.deep.equal(["172.30.0.2"]); // web is on net1 only
      expect(await resolverFor(port2).resolve4("other")).to.deep.equal(["172.31.0.2"]);
      expect(await resolverFor(port2).resolve4(UPSTREAM_NAME)).to.deep.equal([UPSTREAM_ADDRESS.join(".")]);
      expect([own.udpQueries, good.udpQueries]).to.deep.equal([1, 0]);
    } finally {
      dns.removeEndpoint("net2", "asker");
      dns.removeEndpoint("net1", "asker");
      await own.stop();
    }
    // gone from both networks: an asker of net2 sees net2's names only, and the default servers
    expect(await errorCode(resolverFor(port2).resolve4("web"))).to.not.equal("");
    expect(await resolverFor(port2).resolve4(UPSTREAM_NAME)).to.deep.equal([UPSTREAM_ADDRESS.join(".")]);
    expect(good.udpQueries).to.be.greaterThan(0);
  });

  it("reads the nameservers of a resolv.conf", () => {
    const text = [
      "# nameserver 192.0.2.99",
      "; nameserver 192.0.2.98",
      "nameserver 127.0.0.53",
      "  nameserver\t192.0.2.1  ",
      "nameserver fe80::1%eth0",
      "nameserver 2001:db8::53",
      "nameserver not-an-address",
      "nameserver",
      "search example.invalid",
      "options edns0 trust-ad",
    ].join("\n");
    expect(nameserversOf(text)).to.deep.equal(["127.0.0.53", "192.0.2.1", "fe80::1%eth0", "2001:db8::53"]);
    expect(nameserversOf("")).to.deep.equal([]);
  });
});
