/**
 * The userland proxy of published ports, in-process and through the real /usr/sbin/docker-proxy
 * (`--userland-proxy-path`), against real servers on loopback addresses only (127.0.0.1,
 * 127.0.0.2, ::1; one test binds 0.0.0.0 and :: for a moment, to check that they share a port
 * as Docker binds them, and talks to them over loopback); and the host port allocator's
 * bookkeeping. Nothing here changes the host's network
 * configuration: the tests only bind sockets on loopback, and stop every server, proxy and
 * process they start.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { join } from "node:path";
import {
  ephemeralRange,
  PortAllocator,
  PortAlreadyAllocatedError,
  PortsExhaustedError,
} from "../plugins/network-bridge/port-allocator.js";
import { startProxy, type ProxyHandle, type ProxySpec } from "../plugins/network-bridge/userland-proxy.js";
import { makeTempDir } from "./helpers/engined.js";

const DOCKER_PROXY = "/usr/sbin/docker-proxy";
const SETPRIV = "/usr/bin/setpriv";
const CONTAINER_IP = "127.0.0.2";
const MIB = 1 << 20;

// ---------------------------------------------------------------- helpers

/** Everything a test started, closed in afterEach even when the test failed. */
const cleanups: Array<() => Promise<unknown> | unknown> = [];

async function cleanUp(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) await Promise.resolve(fn()).catch(() => undefined);
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port, host, ipv6Only: false }, () => resolve((server.address() as AddressInfo).port));
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

function bindUdp(socket: UdpSocket, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(port, host, () => resolve(socket.address().port));
  });
}

/** A port nothing listens on at the moment (the kernel's choice), for a proxy to bind. */
async function freePort(proto: "tcp" | "udp", host: string): Promise<number> {
  if (proto === "tcp") {
    const server = createServer();
    const port = await listen(server, 0, host);
    await closeServer(server);
    return port;
  }
  const socket = createSocket(host.includes(":") ? "udp6" : "udp4");
  const port = await bindUdp(socket, 0, host);
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

/** A TCP server on 127.0.0.2 that runs `handle` for each connection; closed after the test. */
async function tcpServer(handle: (socket: Socket) => void): Promise<number> {
  const sockets = new Set<Socket>();
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    handle(socket);
  });
  const port = await listen(server, 0, CONTAINER_IP);
  cleanups.push(() => {
    for (const s of sockets) s.destroy();
    return closeServer(server);
  });
  return port;
}

/** A UDP server on 127.0.0.2 answering `<the sender's port>|<the datagram>`. */
async function udpEchoServer(): Promise<{ port: number; senders: Set<number> }> {
  const socket = createSocket("udp4");
  const senders = new Set<number>();
  socket.on("message", (msg, from) => {
    senders.add(from.port);
    socket.send(`${from.port}|${msg.toString()}`, from.port, from.address);
  });
  const port = await bindUdp(socket, 0, CONTAINER_IP);
  cleanups.push(() => new Promise<void>((resolve) => socket.close(() => resolve())));
  return { port, senders };
}

async function proxy(spec: ProxySpec, opts: Parameters<typeof startProxy>[1]): Promise<ProxyHandle> {
  const handle = await startProxy(spec, opts);
  cleanups.push(() => handle.stop());
  return handle;
}

/** Connects, writes `data`, half-closes, and resolves with everything the other side sent. */
function exchange(host: string, port: number, data: Buffer | string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, allowHalfOpen: true });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer from ${host}:${port} in 20 s`));
    }, 20_000);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on("end", () => {
      clearTimeout(timer);
      socket.end();
      resolve(Buffer.concat(chunks));
    });
    socket.end(data);
  });
}

/** Sends one datagram from `socket` and waits for one answer (bounded: 3 tries of 1 s). */
async function udpRequest(socket: UdpSocket, host: string, port: number, text: string): Promise<string> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const answer = await new Promise<string | undefined>((resolve) => {
      const timer = setTimeout(() => {
        socket.off("message", onMessage);
        resolve(undefined);
      }, 1_000);
      const onMessage = (msg: Buffer) => {
        clearTimeout(timer);
        socket.off("message", onMessage);
        resolve(msg.toString());
      };
      socket.on("message", onMessage);
      socket.send(text, port, host);
    });
    if (answer !== undefined) return answer;
  }
  throw new Error(`no UDP answer from ${host}:${port}`);
}

async function udpClient(type: "udp4" | "udp6" = "udp4"): Promise<UdpSocket> {
  const socket = createSocket(type);
  await bindUdp(socket, 0, type === "udp4" ? "127.0.0.1" : "::1");
  cleanups.push(() => new Promise<void>((resolve) => socket.close(() => resolve())));
  return socket;
}

/** The test process's direct children (pid, command name, state), read from /proc. */
function children(): Array<{ pid: number; comm: string; state: string }> {
  const found: Array<{ pid: number; comm: string; state: string }> = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // exited while we looked
    }
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split at the last ")".
    const close = stat.lastIndexOf(")");
    const [state, ppid] = stat.slice(close + 2).split(" ");
    if (Number(ppid) === process.pid) found.push({ pid: Number(entry), comm: stat.slice(stat.indexOf("(") + 1, close), state });
  }
  return found;
}

/** Gone, or a zombie (dead, waiting for a parent that is not us): either way it holds nothing. */
function processGone(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") ?? true;
  } catch {
    return true;
  }
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function canBind(proto: "tcp" | "udp", host: string, port: number): Promise<boolean> {
  if (proto === "tcp") {
    const server = createServer();
    try {
      await listen(server, port, host);
      await closeServer(server);
      return true;
    } catch {
      return false;
    }
  }
  const socket = createSocket(host.includes(":") ? "udp6" : "udp4");
  try {
    await bindUdp(socket, port, host);
    return true;
  } catch {
    return false;
  } finally {
    socket.close();
  }
}

function sha256(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

// ---------------------------------------------------------------- the proxy, both ways

const modes: Array<{ name: string; path?: string }> = [{ name: "in-process" }, { name: "docker-proxy", path: DOCKER_PROXY }];

describe("userland proxy", function () {
  this.timeout(30_000);
  afterEach(cleanUp);

  for (const mode of modes) {
    describe(mode.name, function () {
      before(function () {
        if (mode.path && !existsSync(mode.path)) this.skip(); // reason: the docker-proxy binary is not installed at /usr/sbin/docker-proxy
      });
      const opts = { path: mode.path };

      it("forwards TCP: an echo, and 8 MiB each way that arrive whole", async () => {
        const backend = await tcpServer((socket) => socket.pipe(socket));
        const hostPort = await freePort("tcp", "127.0.0.1");
        const handle = await proxy({ proto: "tcp", hostIp: "127.0.0.1", hostPort, containerIp: CONTAINER_IP, containerPort: backend }, opts);
        if (mode.path) expect(handle.pid).to.be.a("number");
        else expect(handle.pid).to.equal(undefined);

        expect((await exchange("127.0.0.1", hostPort, "hello")).toString()).to.equal("hello");
        const big = randomBytes(8 * MIB);
        const back = await exchange("127.0.0.1", hostPort, big);
        expect(back.length).to.equal(big.length);
        expect(sha256(back)).to.equal(sha256(big));
      });

      it("passes a half-close on: the client ends its side and still gets the server's answer", async () => {
        const backend = await tcpServer((socket) => {
          const chunks: Buffer[] = [];
          socket.on("data", (c: Buffer) => chunks.push(c));
          // Answers only after the client's FIN: a proxy that closed both ways would lose it.
          socket.on("end", () => setTimeout(() => socket.end(`answer to ${Buffer.concat(chunks).toString()}`), 100));
        });
        const hostPort = await freePort("tcp", "127.0.0.1");
        await proxy({ proto: "tcp", hostIp: "127.0.0.1", hostPort, containerIp: CONTAINER_IP, containerPort: backend }, opts);
        expect((await exchange("127.0.0.1", hostPort, "the question")).toString()).to.equal("answer to the question");
      });

      it("closes the client's connection when the container refuses", async () => {
        const refusing = await freePort("tcp", CONTAINER_IP);
        const hostPort = await freePort("tcp", "127.0.0.1");
        await proxy({ proto: "tcp", hostIp: "127.0.0.1", hostPort, containerIp: CONTAINER_IP, containerPort: refusing }, opts);
        const socket = connect({ host: "127.0.0.1", port: hostPort });
        cleanups.push(() => socket.destroy());
        let received = 0;
        socket.on("data", (c: Buffer) => (received += c.length));
        socket.on("error", () => undefined); // a reset is one way of being closed
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error("the client connection stayed open")), 5_000);
          socket.on("close", () => {
            clearTimeout(timer);
            resolve();
          });
        });
        expect(received).to.equal(0);
      });

      it("relays UDP for two clients, each to its own source port at the container", async () => {
        const server = await udpEchoServer();
        const hostPort = await freePort("udp", "127.0.0.1");
        await proxy({ proto: "udp", hostIp: "127.0.0.1", hostPort, containerIp: CONTAINER_IP, containerPort: server.port }, opts);
        const [a, b] = [await udpClient(), await udpClient()];
        const answerA = await udpRequest(a, "127.0.0.1", hostPort, "from a");
        const answerB = await udpRequest(b, "127.0.0.1", hostPort, "from b");
        expect(answerA).to.match(/^\d+\|from a$/);
        expect(answerB).to.match(/^\d+\|from b$/);
        expect(answerA.split("|")[0]).to.not.equal(answerB.split("|")[0]);
        expect(await udpRequest(a, "127.0.0.1", hostPort, "again")).to.equal(`${answerA.split("|")[0]}|again`);
        expect(server.senders.size).to.equal(2);
      });

      it("listens on ::1; binds :: IPv6-only, so 0.0.0.0 and :: share a port as Docker publishes them", async () => {
        const backend = await tcpServer((socket) => socket.pipe(socket));
        const onLoopback6 = await freePort("tcp", "::1");
        await proxy({ proto: "tcp", hostIp: "::1", hostPort: onLoopback6, containerIp: CONTAINER_IP, containerPort: backend }, opts);
        expect((await exchange("::1", onLoopback6, "six")).toString()).to.equal("six");

        // Two containers' servers, to see which binding served a client.
        const tagged = (tag: string) => tcpServer((socket) => socket.on("data", () => undefined).on("end", () => socket.end(tag)));
        const [v4Backend, v6Backend] = [await tagged("v4"), await tagged("v6")];
        const both = await freePort("tcp", "::"); // free for IPv4 and IPv6
        await proxy({ proto: "tcp", hostIp: "::", hostPort: both, containerIp: CONTAINER_IP, containerPort: v6Backend }, opts);
        await proxy({ proto: "tcp", hostIp: "0.0.0.0", hostPort: both, containerIp: CONTAINER_IP, containerPort: v4Backend }, opts);
        expect((await exchange("::1", both, "")).toString()).to.equal("v6");
        expect((await exchange("127.0.0.1", both, "")).toString()).to.equal("v4");

        const server = await udpEchoServer();
        const udpPort = await freePort("udp", "::1");
        await proxy({ proto: "udp", hostIp: "::1", hostPort: udpPort, containerIp: CONTAINER_IP, containerPort: server.port }, opts);
        expect(await udpRequest(await udpClient("udp6"), "::1", udpPort, "six")).to.match(/^\d+\|six$/);
      });

      for (const proto of ["tcp", "udp"] as const) {
        it(`rejects with "port is already allocated" when the ${proto} port is taken`, async () => {
          const hostPort = await freePort(proto, "127.0.0.1");
          if (proto === "tcp") {
            const holder = createServer();
            await listen(holder, hostPort, "127.0.0.1");
            cleanups.push(() => closeServer(holder));
          } else {
            const holder = createSocket("udp4");
            await bindUdp(holder, hostPort, "127.0.0.1");
            cleanups.push(() => holder.close());
          }
          const spec: ProxySpec = { proto, hostIp: "0.0.0.0", hostPort, containerIp: CONTAINER_IP, containerPort: 9 };
          const err = await startProxy(spec, opts).then(
            (h) => {
              cleanups.push(() => h.stop());
              return undefined;
            },
            (e: unknown) => e,
          );
          expect(err).to.be.instanceOf(PortAlreadyAllocatedError);
          expect((err as Error).message).to.equal(`Bind for 0.0.0.0:${hostPort} failed: port is already allocated`);
          expect((err as PortAlreadyAllocatedError).detail).to.match(/address already in use/);
          if (mode.path) expect(children().filter((c) => c.comm === "docker-proxy")).to.deep.equal([]);
        });

        it(`stop() frees the ${proto} port: binding it again works`, async () => {
          const hostPort = await freePort(proto, "127.0.0.1");
          const handle = await startProxy({ proto, hostIp: "127.0.0.1", hostPort, containerIp: CONTAINER_IP, containerPort: 9 }, opts);
          cleanups.push(() => handle.stop());
          expect(await canBind(proto, "127.0.0.1", hostPort)).to.equal(false);
          await handle.stop();
          expect(await canBind(proto, "127.0.0.1", hostPort)).to.equal(true);
          if (handle.pid !== undefined) expect(processGone(handle.pid)).to.equal(true);
          await handle.stop(); // a second stop is harmless
        });
      }
    });
  }

  it("refuses a spec it cannot proxy: port 0 (the allocator picks ports), a bad address", async () => {
    const valid: ProxySpec = { proto: "tcp", hostIp: "127.0.0.1", hostPort: 18080, containerIp: CONTAINER_IP, containerPort: 80 };
    const reasons = await Promise.all(
      [{ hostPort: 0 }, { containerPort: 65536 }, { containerIp: "container" }, { hostIp: "127.0.0" }].map((change) =>
        startProxy({ ...valid, ...change }).then(
          (h) => h.stop().then(() => "started"),
          (e: Error) => e.message,
        ),
      ),
    );
    expect(reasons).to.deep.equal([
      "Error starting userland proxy: invalid host port 0",
      "Error starting userland proxy: invalid container port 65536",
      'Error starting userland proxy: invalid container IP address "container"',
      'Error starting userland proxy: invalid host IP address "127.0.0"',
    ]);
  });

  describe("in-process UDP client tracking", () => {
    it("drops a client that stays idle past the timeout: its next datagram comes from a new socket", async () => {
      const server = await udpEchoServer();
      const hostPort = await freePort("udp", "127.0.0.1");
      await proxy({ proto: "udp", hostIp: "127.0.0.1", hostPort, containerIp: CONTAINER_IP, containerPort: server.port }, { udpIdleTimeoutMs: 200 });
      const client = await udpClient();
      const first = (await udpRequest(client, "127.0.0.1", hostPort, "1")).split("|")[0];
      expect((await udpRequest(client, "127.0.0.1", hostPort, "2")).split("|")[0]).to.equal(first); // still tracked
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect((await udpRequest(client, "127.0.0.1", hostPort, "3")).split("|")[0]).to.not.equal(first);
    });

    it("keeps at most udpMaxClients, dropping the least recently active", async () => {
      const server = await udpEchoServer();
      const hostPort = await freePort("udp", "127.0.0.1");
      await proxy({ proto: "udp", hostIp: "127.0.0.1", hostPort, containerIp: CONTAINER_IP, containerPort: server.port }, { udpMaxClients: 2 });
      const [a, b, c] = [await udpClient(), await udpClient(), await udpClient()];
      const portOf = async (s: UdpSocket) => (await udpRequest(s, "127.0.0.1", hostPort, "x")).split("|")[0];
      const a1 = await portOf(a);
      const b1 = await portOf(b);
      expect(await portOf(a)).to.equal(a1); // a is now the most recent, b the oldest
      await portOf(c); // a third client: b goes
      expect(await portOf(a)).to.equal(a1);
      expect(await portOf(b)).to.not.equal(b1);
    });
  });

  describe("docker-proxy process handling", function () {
    before(function () {
      if (!existsSync(DOCKER_PROXY)) this.skip(); // reason: the docker-proxy binary is not installed at /usr/sbin/docker-proxy
    });

    it("a binary that never reports readiness is killed at the timeout, leaving no process", async () => {
      const script = join(makeTempDir("engine-proxy-"), "silent-proxy");
      writeFileSync(script, "#!/bin/sh\nexec sleep 30\n");
      chmodSync(script, 0o755);
      const started = Date.now();
      const spec: ProxySpec = { proto: "tcp", hostIp: "127.0.0.1", hostPort: 1, containerIp: CONTAINER_IP, containerPort: 9 };
      const err = await startProxy(spec, { path: script, timeoutMs: 300 }).then(
        (h) => h.stop().then(() => undefined),
        (e: unknown) => e,
      );
      expect((err as Error).message).to.match(/timed out after 300 ms .*127\.0\.0\.1:1/);
      expect(Date.now() - started).to.be.below(5_000);
      expect(children().filter((c) => c.comm === "sleep" || c.comm === "silent-proxy")).to.deep.equal([]);
    });

    it("a binary that exits before reporting rejects with the reason, leaving no process", async () => {
      const spec: ProxySpec = { proto: "tcp", hostIp: "127.0.0.1", hostPort: 1, containerIp: CONTAINER_IP, containerPort: 9 };
      const err = await startProxy(spec, { path: "/bin/false" }).then(
        (h) => h.stop().then(() => undefined),
        (e: unknown) => e,
      );
      expect((err as Error).message).to.match(/^Error starting userland proxy: .*false exited \(code 1\) before listening/);
      expect(children().filter((c) => c.comm === "false")).to.deep.equal([]);
    });

    it("an address docker-proxy cannot bind rejects with its own words", async () => {
      // Not an address of this host (192.0.2.0/24 is reserved for documentation): the bind
      // fails at once and nothing is sent.
      const spec: ProxySpec = { proto: "tcp", hostIp: "192.0.2.1", hostPort: 18080, containerIp: CONTAINER_IP, containerPort: 9 };
      const err = await startProxy(spec, { path: DOCKER_PROXY }).then(
        (h) => h.stop().then(() => undefined),
        (e: unknown) => e,
      );
      expect((err as Error).message).to.equal("Error starting userland proxy: listen tcp4 192.0.2.1:18080: bind: cannot assign requested address");
      expect(children().filter((c) => c.comm === "docker-proxy")).to.deep.equal([]);
    });

    it("a path that is not an executable is refused before anything runs", async () => {
      const spec: ProxySpec = { proto: "tcp", hostIp: "127.0.0.1", hostPort: 1, containerIp: CONTAINER_IP, containerPort: 9 };
      const err = await startProxy(spec, { path: "/nonexistent/docker-proxy" }).then(
        (h) => h.stop().then(() => undefined),
        (e: unknown) => e,
      );
      expect((err as Error).message).to.equal("Error starting userland proxy: /nonexistent/docker-proxy is not an executable file");
    });

    it("the proxy dies with the process that started it (parent-death signal), freeing the port", async function () {
      if (!existsSync(SETPRIV)) this.skip(); // reason: setpriv (util-linux) is missing, so no parent-death signal is set
      const hostPort = await freePort("tcp", "127.0.0.1");
      const moduleUrl = new URL("../plugins/network-bridge/userland-proxy.js", import.meta.url).href;
      const code = `
        const { startProxy } = await import(${JSON.stringify(moduleUrl)});
        const h = await startProxy({ proto: "tcp", hostIp: "127.0.0.1", hostPort: ${hostPort}, containerIp: "${CONTAINER_IP}", containerPort: 9 }, { path: "${DOCKER_PROXY}" });
        process.stdout.write(h.pid + "\\n");
        setInterval(() => {}, 1000);`;
      const daemon = spawn(process.execPath, ["--input-type=module", "-e", code], { stdio: ["ignore", "pipe", "inherit"] });
      const daemonExited = new Promise((resolve) => daemon.once("exit", resolve));
      cleanups.push(async () => {
        daemon.kill("SIGKILL");
        await daemonExited;
      });
      const pid = await new Promise<number>((resolve, reject) => {
        let out = "";
        daemon.stdout!.on("data", (c: Buffer) => {
          out += c.toString();
          if (out.includes("\n")) resolve(Number(out.trim()));
        });
        daemon.once("exit", () => reject(new Error(`the daemon stand-in exited before starting the proxy: ${out}`)));
      });
      cleanups.push(() => {
        if (!processGone(pid)) process.kill(pid, "SIGKILL");
      });
      expect(processGone(pid)).to.equal(false);
      expect(await canBind("tcp", "127.0.0.1", hostPort)).to.equal(false);

      daemon.kill("SIGKILL");
      await daemonExited;
      await waitFor(`docker-proxy ${pid} to end`, () => processGone(pid));
      await waitFor(`port ${hostPort} to be free`, () => canBind("tcp", "127.0.0.1", hostPort));
    });
  });
});

// ---------------------------------------------------------------- the port allocator

describe("port allocator", () => {
  afterEach(cleanUp);

  it("reads the kernel's ephemeral range, with Docker's fallback when it cannot", () => {
    const [first, last] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    expect(ephemeralRange()).to.deep.equal({ first, last });
    expect(ephemeralRange("/nonexistent/ip_local_port_range")).to.deep.equal({ first: 49153, last: 65535 });
  });

  it("gives ephemeral ports in turn, never the same one twice, until they run out", () => {
    const allocator = new PortAllocator({ first: 40000, last: 40003 });
    const given = [0, 1, 2, 3].map(() => allocator.allocate("tcp", "0.0.0.0", 0));
    expect(given).to.deep.equal([40000, 40001, 40002, 40003]);
    expect(() => allocator.allocate("tcp", "0.0.0.0", 0)).to.throw(PortsExhaustedError, "Bind for 0.0.0.0:40000-40003 failed: all ports are allocated (tcp)");
    // Another protocol has its own ports.
    expect(allocator.allocate("udp", "0.0.0.0", 0)).to.equal(40000);
    // A port given back comes out again once the others are taken.
    allocator.release("tcp", "0.0.0.0", 40001);
    expect(allocator.allocate("tcp", "0.0.0.0", 0)).to.equal(40001);
  });

  it("uses the kernel's ephemeral range by default", () => {
    const { first, last } = ephemeralRange();
    const port = new PortAllocator().allocate("tcp", "127.0.0.1", 0);
    expect(port).to.be.within(first, last);
  });

  it("refuses a specific port given out already, with Docker's message", () => {
    const allocator = new PortAllocator({ first: 40000, last: 40010 });
    expect(allocator.allocate("tcp", "", 8080)).to.equal(8080);
    expect(() => allocator.allocate("tcp", "0.0.0.0", 8080)).to.throw(PortAlreadyAllocatedError, "Bind for 0.0.0.0:8080 failed: port is already allocated");
    expect(() => allocator.allocate("tcp", "127.0.0.1", 8080, 8080)).to.throw(PortAlreadyAllocatedError, "Bind for 127.0.0.1:8080 failed");
    expect(allocator.allocate("udp", "0.0.0.0", 8080)).to.equal(8080);
  });

  it("treats 0.0.0.0 as every IPv4 address and :: as every IPv6 address, like the proxy's binds", () => {
    const allocator = new PortAllocator({ first: 40000, last: 40010 });
    allocator.allocate("tcp", "127.0.0.1", 8080);
    expect(allocator.allocate("tcp", "127.0.0.2", 8080)).to.equal(8080); // another address: no conflict
    expect(() => allocator.allocate("tcp", "0.0.0.0", 8080)).to.throw(PortAlreadyAllocatedError, "Bind for 0.0.0.0:8080 failed");
    expect(() => allocator.allocate("tcp", "::ffff:127.0.0.1", 8080)).to.throw(PortAlreadyAllocatedError, "Bind for 127.0.0.1:8080");
    expect(allocator.allocate("tcp", "::", 8080)).to.equal(8080); // IPv6-only: no IPv4 address conflicts

    allocator.allocate("tcp", "0.0.0.0", 9090);
    expect(() => allocator.allocate("tcp", "10.1.2.3", 9090)).to.throw(PortAlreadyAllocatedError);
    expect(allocator.allocate("tcp", "::", 9090)).to.equal(9090); // Docker's pair: 0.0.0.0 and :: on one port
    expect(() => allocator.allocate("tcp", "0:0::1", 9090)).to.throw(PortAlreadyAllocatedError, "Bind for [::1]:9090");
    expect(allocator.allocate("udp", "10.1.2.3", 9090)).to.equal(9090);

    allocator.allocate("tcp", "fd00::5", 7070);
    expect(() => allocator.allocate("tcp", "::", 7070)).to.throw(PortAlreadyAllocatedError, "Bind for [::]:7070 failed");
    expect(allocator.allocate("tcp", "0.0.0.0", 7070)).to.equal(7070);

    // An ephemeral request on a specific address skips ports 0.0.0.0 holds.
    const small = new PortAllocator({ first: 40000, last: 40002 });
    small.allocate("tcp", "0.0.0.0", 40000);
    expect(small.allocate("tcp", "127.0.0.1", 0)).to.equal(40001);
  });

  it("gives the first free port of a range, then the next ones, wrapping around", () => {
    const allocator = new PortAllocator({ first: 40000, last: 40010 });
    allocator.allocate("tcp", "0.0.0.0", 8001); // taken by another binding
    expect(allocator.allocate("tcp", "0.0.0.0", 8000, 8003)).to.equal(8000);
    expect(allocator.allocate("tcp", "0.0.0.0", 8000, 8003)).to.equal(8002);
    allocator.release("tcp", "0.0.0.0", 8000);
    // Docker's cursor: after 8002 comes 8003, and only then the released 8000.
    expect(allocator.allocate("tcp", "0.0.0.0", 8000, 8003)).to.equal(8003);
    expect(allocator.allocate("tcp", "0.0.0.0", 8000, 8003)).to.equal(8000);
    expect(() => allocator.allocate("tcp", "0.0.0.0", 8000, 8003)).to.throw(PortsExhaustedError, "0.0.0.0:8000-8003");
    expect(() => allocator.allocate("tcp", "0.0.0.0", 8005, 8004)).to.throw(RangeError);
    expect(() => allocator.allocate("tcp", "0.0.0.0", 70000)).to.throw(RangeError);
    expect(() => allocator.allocate("tcp", "not-an-ip", 8080)).to.throw(TypeError);
  });

  it("reserve marks ports of restored containers; release gives any port back", () => {
    const allocator = new PortAllocator({ first: 40000, last: 40001 });
    allocator.reserve("tcp", "0.0.0.0", 40000);
    allocator.reserve("tcp", "0.0.0.0", 40000); // marking twice is harmless
    expect(() => allocator.allocate("tcp", "127.0.0.1", 40000)).to.throw(PortAlreadyAllocatedError);
    expect(allocator.allocate("tcp", "0.0.0.0", 0)).to.equal(40001);
    allocator.release("tcp", "0.0.0.0", 40000);
    allocator.release("tcp", "0.0.0.0", 40000); // releasing a free port does nothing
    allocator.release("sctp", "10.9.9.9", 1234);
    expect(allocator.allocate("tcp", "127.0.0.1", 40000)).to.equal(40000);
  });

  it("with the proxy: a port another process holds is released and the next one is bound", async function () {
    this.timeout(10_000);
    // Two adjacent free ports (bounded search), the first of them then held by a stranger.
    let first = 0;
    for (let i = 0; i < 20 && !first; i++) {
      const candidate = await freePort("tcp", "127.0.0.1");
      if (candidate < 65535 && (await canBind("tcp", "127.0.0.1", candidate + 1))) first = candidate;
    }
    expect(first, "two adjacent free ports").to.be.above(0);
    const stranger = createServer();
    await listen(stranger, first, "127.0.0.1");
    cleanups.push(() => closeServer(stranger));
    const allocator = new PortAllocator({ first, last: first + 1 });
    const spec = (hostPort: number): ProxySpec => ({ proto: "tcp", hostIp: "127.0.0.1", hostPort, containerIp: CONTAINER_IP, containerPort: 9 });
    let handle: ProxyHandle | undefined;
    for (let attempt = 0; attempt < 10 && !handle; attempt++) {
      const port = allocator.allocate("tcp", "127.0.0.1", 0);
      try {
        handle = await startProxy(spec(port));
      } catch (err) {
        if (!(err instanceof PortAlreadyAllocatedError)) throw err;
        allocator.release("tcp", "127.0.0.1", port);
      }
    }
    cleanups.push(() => handle?.stop());
    expect(handle?.spec.hostPort).to.equal(first + 1);
  });
});
