/**
 * The host port allocator of published ports (plugins/network-bridge/port-allocator.ts): the
 * kernel's ephemeral range, ports given in turn and given back, Docker's messages for a port
 * taken or a range used up, how 0.0.0.0 and :: cover the addresses of their family, and, with the
 * in-process userland proxy, a port another process holds skipped for the next one. Only sockets
 * on loopback are bound, and each is closed after its test.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import {
  ephemeralRange,
  PortAllocator,
  PortAlreadyAllocatedError,
  PortsExhaustedError,
} from "../plugins/network-bridge/port-allocator.js";
import { startProxy, type ProxyHandle, type ProxySpec } from "../plugins/network-bridge/userland-proxy.js";
import { canBind, cleanUp, cleanups, closeServer, CONTAINER_IP, freePort, listen } from "./helpers/loopback-sockets.js";

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
