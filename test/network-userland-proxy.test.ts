/**
 * The userland proxy of published ports, in-process and through the real /usr/sbin/docker-proxy
 * (`--userland-proxy-path`), against real servers on loopback addresses only (127.0.0.1,
 * 127.0.0.2, ::1; one test binds 0.0.0.0 and :: for a moment, to check that they share a port
 * as Docker binds them, and talks to them over loopback). Nothing here changes the host's network
 * configuration: the tests only bind sockets on loopback, and stop every server, proxy and
 * process they start. The host port allocator's tests are in network-port-allocator.test.ts.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { join } from "node:path";
import { PortAlreadyAllocatedError } from "../plugins/network-bridge/port-allocator.js";
import { startProxy, type ProxyHandle, type ProxySpec } from "../plugins/network-bridge/userland-proxy.js";
import { makeTempDir } from "./helpers/engined.js";
import {
  bindUdp,
  canBind,
  cleanUp,
  cleanups,
  closeServer,
  CONTAINER_IP,
  exchange,
  freePort,
  listen,
  tcpServer,
  udpClient,
  udpEchoServer,
  udpRequest,
} from "./helpers/loopback-sockets.js";

const DOCKER_PROXY = "/usr/sbin/docker-proxy";
const SETPRIV = "/usr/bin/setpriv";
const MIB = 1 << 20;

// ---------------------------------------------------------------- helpers

async function proxy(spec: ProxySpec, opts: Parameters<typeof startProxy>[1]): Promise<ProxyHandle> {
  const handle = await startProxy(spec, opts);
  cleanups.push(() => handle.stop());
  return handle;
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
          expect((err as PortAlreadyAllocatedError).detail).to.match(new RegExp(`^listen ${proto}4 0\\.0\\.0\\.0:${hostPort}: bind: address already in use$`));
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
