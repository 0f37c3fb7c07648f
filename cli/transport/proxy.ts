/**
 * HTTP proxies for tcp:// daemons, from the environment as the Docker CLI reads it:
 * HTTPS_PROXY (for TLS connections; it wins over HTTP_PROXY there), HTTP_PROXY, NO_PROXY
 * (comma-separated hosts, domain suffixes, `*`, host:port, CIDR-less IPs), upper or lower case.
 * The client opens a tunnel with CONNECT and speaks to the daemon through it.
 */
import { connect as netConnect } from "node:net";
import type { Duplex } from "node:stream";
import { HostError, opened, type Target } from "./dial.js";

export interface Proxy {
  host: string;
  port: number;
  /** `user:password` from the proxy URL, sent as Proxy-Authorization. */
  auth?: string;
}

const envOf = (env: NodeJS.ProcessEnv, name: string) => env[name] ?? env[name.toLowerCase()];

/** The proxy to use for `target`, or undefined. */
export function proxyFor(target: Extract<Target, { proto: "tcp" }>, tls: boolean, env: NodeJS.ProcessEnv): Proxy | undefined {
  const value = (tls ? envOf(env, "HTTPS_PROXY") || envOf(env, "HTTP_PROXY") : envOf(env, "HTTP_PROXY")) ?? "";
  if (!value || excluded(target, envOf(env, "NO_PROXY") ?? "")) return undefined;
  let url: URL;
  try {
    url = new URL(/^[a-z]+:\/\//i.test(value) ? value : `http://${value}`);
  } catch {
    throw new HostError(`invalid proxy address "${value}"`);
  }
  if (url.protocol !== "http:") throw new HostError(`unsupported proxy scheme "${url.protocol}" in "${value}": use http://`);
  const auth = url.username ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined;
  return { host: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port) || 80, auth };
}

function excluded(target: { host: string; port: number }, noProxy: string): boolean {
  const host = target.host.toLowerCase();
  for (const raw of noProxy.split(",")) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    if (entry === "*") return true;
    const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(entry);
    if (!m) continue;
    if (m[2] && Number(m[2]) !== target.port) continue;
    const name = m[1].replace(/^\[|\]$/g, "");
    if (host === name) return true;
    const suffix = name.startsWith(".") ? name : name.startsWith("*.") ? name.slice(1) : `.${name}`;
    if (host.endsWith(suffix)) return true;
  }
  return false;
}

/** A connection to `target` through `proxy` (CONNECT host:port). */
export async function tunnel(proxy: Proxy, target: { host: string; port: number }): Promise<Duplex> {
  const socket = await opened(netConnect({ host: proxy.host, port: proxy.port }), `${proxy.host}:${proxy.port}`);
  const authority = `${target.host.includes(":") ? `[${target.host}]` : target.host}:${target.port}`;
  const auth = proxy.auth ? `Proxy-Authorization: Basic ${Buffer.from(proxy.auth).toString("base64")}\r\n` : "";
  socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${auth}\r\n`);
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) return;
      socket.off("data", onData);
      socket.pause();
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(buf.toString("latin1", 0, end))?.[1];
      if (status !== "200") {
        socket.destroy();
        reject(new HostError(`the proxy ${proxy.host}:${proxy.port} refused the tunnel to ${authority}: ${buf.toString("latin1", 0, buf.indexOf("\r\n"))}`));
        return;
      }
      if (buf.length > end + 4) socket.unshift(buf.subarray(end + 4));
      resolve(socket);
    };
    socket.on("data", onData);
    socket.once("error", reject);
    socket.once("close", () => reject(new HostError(`the proxy ${proxy.host}:${proxy.port} closed the connection`)));
  });
}
