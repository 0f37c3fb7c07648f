/**
 * core/net/go-dial-error.ts: a failed connection in Go's words, as Docker's daemon reports one,
 * from real failures on loopback (a port nothing listens on, over node:net and over fetch, which
 * wraps the socket's error), and a resolver failure's shape as Node gives it (no query leaves
 * the machine in a test).
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { connect, createServer } from "node:net";
import { goDialError, goErrnoText } from "../core/net/go-dial-error.js";

/** A port on loopback that nothing listens on: one the kernel gave and was closed again. */
async function closedPort(host: string): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function connectError(host: string, port: number): Promise<Error> {
  return new Promise((resolve) => connect(port, host).once("error", resolve));
}

describe("core/net go-dial-error", () => {
  it("says a refused connection as Go's net package does, IPv6 addresses in brackets", async () => {
    const port = await closedPort("127.0.0.1");
    expect(goDialError(await connectError("127.0.0.1", port))).to.equal(`dial tcp 127.0.0.1:${port}: connect: connection refused`);
    const port6 = await closedPort("::1");
    expect(goDialError(await connectError("::1", port6))).to.equal(`dial tcp [::1]:${port6}: connect: connection refused`);
  });

  it("finds the socket's error under fetch's own", async () => {
    const port = await closedPort("127.0.0.1");
    const err = await fetch(`http://127.0.0.1:${port}/`).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as Error).message).to.equal("fetch failed");
    expect(goDialError(err)).to.equal(`dial tcp 127.0.0.1:${port}: connect: connection refused`);
  });

  it("says an errno in Go's words where libuv's differ", async () => {
    // an address no interface has: EADDRNOTAVAIL, libuv's "address not available"
    const err = await new Promise<NodeJS.ErrnoException>((resolve) => {
      const server = createServer();
      server.once("error", resolve);
      server.listen(0, "192.0.2.1");
    });
    expect(err.code).to.equal("EADDRNOTAVAIL");
    expect(goErrnoText(err)).to.equal("cannot assign requested address");
    expect(goErrnoText(Object.assign(new Error("x"), { code: "EADDRINUSE", errno: -98 }))).to.equal("address already in use");
  });

  it("says a name the resolver does not know as a lookup, and leaves other errors alone", () => {
    const lookup = Object.assign(new Error("getaddrinfo ENOTFOUND registry.invalid"), { code: "ENOTFOUND", errno: -3008, syscall: "getaddrinfo", hostname: "registry.invalid" });
    expect(goDialError(lookup)).to.equal("dial tcp: lookup registry.invalid: no such host");
    const again = Object.assign(new Error("getaddrinfo EAI_AGAIN registry.example"), { code: "EAI_AGAIN", errno: -3001, syscall: "getaddrinfo", hostname: "registry.example" });
    expect(goDialError(again)).to.equal("dial tcp: lookup registry.example: Temporary failure in name resolution");
    expect(goDialError(new Error("socket hang up"))).to.equal(undefined);
    expect(goDialError(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET", errno: -104, syscall: "read" }))).to.equal(undefined);
  });
});
