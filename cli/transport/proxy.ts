/**
 * HTTP proxies for tcp:// daemons, from the environment as the Docker CLI (Go's
 * httpproxy.FromEnvironment) reads it: HTTPS_PROXY for TLS connections, HTTP_PROXY for plain
 * ones, upper case before lower case, an empty value as unset; NO_PROXY lists hosts, domain
 * suffixes (`.example.com`, `*.example.com`, `example.com` with its subdomains), IPs, CIDR
 * ranges, each optionally with `:port`, or `*`. As in Go, localhost and loopback addresses never
 * go through a proxy.
 *
 * The client opens a tunnel with CONNECT for TLS and plain HTTP alike. (Go sends plain HTTP to
 * the proxy as absolute-URI requests instead; a tunnel serves attach's upgraded stream as well,
 * which the Docker CLI dials directly, around the proxy.)
 */
import { BlockList, connect as netConnect, isIP } from "node:net";
import type { Duplex } from "node:stream";
import { HostError, type Target } from "./dial.js";

export interface Proxy {
  host: string;
  port: number;
  /** `user:password` from the proxy URL, sent as Proxy-Authorization. */
  auth?: string;
  /** Where the address came from, e.g. "HTTP_PROXY", for messages. */
  source: string;
}

/** The first non-empty of NAME and name, with the name it came from. */
function envOf(env: NodeJS.ProcessEnv, name: string): [string, string] | undefined {
  for (const n of [name, name.toLowerCase()]) if (env[n]) return [env[n]!, n];
  return undefined;
}

/** The proxy to use for `target`, or undefined. */
export function proxyFor(target: Extract<Target, { proto: "tcp" }>, tls: boolean, env: NodeJS.ProcessEnv): Proxy | undefined {
  const found = envOf(env, tls ? "HTTPS_PROXY" : "HTTP_PROXY");
  if (!found || !useProxy(target, envOf(env, "NO_PROXY")?.[0] ?? "")) return undefined;
  const [value, source] = found;
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`);
  } catch {
    throw new HostError(`invalid proxy address "${value}" in ${source}`);
  }
  if (url.protocol !== "http:") throw new HostError(`unsupported proxy scheme "${url.protocol.slice(0, -1)}" in ${source}="${value}": use http://`);
  const auth = url.username ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined;
  return { host: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port) || 80, auth, source };
}

/** Go's useProxy: false for loopback and for what NO_PROXY lists. */
function useProxy(target: { host: string; port: number }, noProxy: string): boolean {
  const host = target.host.toLowerCase().replace(/\.$/, "");
  const family = isIP(host);
  if (host === "localhost" || (family === 4 && host.startsWith("127.")) || (family === 6 && isLoopback6(host))) return false;
  for (const raw of noProxy.split(",")) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    if (entry === "*") return false;
    const cidr = /^(.+)\/(\d{1,3})$/.exec(entry);
    if (cidr) {
      const kind = isIP(cidr[1]);
      if (kind && family === kind && inRange(host, cidr[1], Number(cidr[2]), kind)) return false;
      continue;
    }
    // "host:port", "[v6]:port", a bare v6 address, or a name
    const m = isIP(entry) ? undefined : /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(entry);
    if (!m && !isIP(entry)) continue;
    if (m?.[2] && Number(m[2]) !== target.port) continue;
    const name = (m?.[1] ?? entry).replace(/^\[|\]$/g, "");
    if (isIP(name)) {
      if (family && sameIp(host, name)) return false;
      continue;
    }
    const suffix = name.startsWith("*.") ? name.slice(1) : name.startsWith(".") ? name : `.${name}`;
    if (host.endsWith(suffix) || (!name.startsWith(".") && !name.startsWith("*.") && host === name)) return false;
  }
  return true;
}

function isLoopback6(host: string): boolean {
  const list = new BlockList();
  list.addAddress("::1", "ipv6");
  list.addSubnet("::ffff:127.0.0.0", 104, "ipv6");
  return list.check(host, "ipv6");
}

function inRange(host: string, network: string, prefix: number, kind: number): boolean {
  const list = new BlockList();
  try {
    list.addSubnet(network, prefix, kind === 4 ? "ipv4" : "ipv6");
  } catch {
    return false;
  }
  return list.check(host, kind === 4 ? "ipv4" : "ipv6");
}

function sameIp(a: string, b: string): boolean {
  const kind = isIP(a);
  if (kind !== isIP(b)) return false;
  const list = new BlockList();
  list.addAddress(b, kind === 4 ? "ipv4" : "ipv6");
  return list.check(a, kind === 4 ? "ipv4" : "ipv6");
}

/** A connection to `target` through `proxy` (CONNECT host:port). */
export function tunnel(proxy: Proxy, target: { host: string; port: number }): Promise<Duplex> {
  const where = `http://${proxy.host.includes(":") ? `[${proxy.host}]` : proxy.host}:${proxy.port}`;
  const authority = `${target.host.includes(":") ? `[${target.host}]` : target.host}:${target.port}`;
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (message: string) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      reject(new HostError(`error during connect: proxy ${where} (${proxy.source}): ${message}`));
    };
    const socket = netConnect({ host: proxy.host, port: proxy.port });
    socket.once("error", (err) => fail(err.message));
    socket.once("close", () => fail(`it closed the connection before the tunnel to ${authority} was open`));
    socket.once("connect", () => {
      const auth = proxy.auth ? `Proxy-Authorization: Basic ${Buffer.from(proxy.auth).toString("base64")}\r\n` : "";
      socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${auth}\r\n`);
    });
    let buf = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) {
        if (buf.length > 64 * 1024) fail("its answer to CONNECT is too long");
        return;
      }
      socket.off("data", onData);
      socket.pause();
      const statusLine = buf.toString("latin1", 0, buf.indexOf("\r\n"));
      // Go accepts exactly 200 here
      if (/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] !== "200") {
        fail(`it refused the tunnel to ${authority}: ${statusLine}`);
        return;
      }
      // the error and close handlers stay: after `settled` they do nothing
      settled = true;
      if (buf.length > end + 4) socket.unshift(buf.subarray(end + 4));
      resolve(socket);
    };
    socket.on("data", onData);
  });
}
