/**
 * The HTTP side of registry traffic: one undici dispatcher per way of connecting (TLS
 * verification, the `certs.d` CA and client certificate of the host, the proxy), reused across
 * pulls so that connections are kept alive. Proxies come from the daemon's settings (flags and
 * file over environment, already merged by the option table); `no-proxy` lists hosts, domain
 * suffixes (`.example.com` or `example.com`), `host:port`, CIDRs or `*`. As in Go's HTTP
 * client, which Docker's daemon uses, loopback and `localhost` are never proxied.
 */
import { readdirSync, readFileSync } from "node:fs";
import { BlockList, isIP } from "node:net";
import { join } from "node:path";
import { rootCertificates } from "node:tls";
import type { Dispatcher } from "undici";
import { undici } from "../http/undici.js";
import { CERTS_DIR, hostnameOf, type Endpoint } from "./endpoints.js";

export interface ProxySettings {
  http: string;
  https: string;
  noProxy: string;
}

interface TlsFiles {
  ca: string[];
  cert?: string;
  key?: string;
}

/** `certs.d/<host>/`: every `*.crt` is a CA; `x.cert` with `x.key` is the client's certificate. */
function certsDirFiles(host: string, root = CERTS_DIR): TlsFiles {
  const dir = join(root, host);
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return { ca: [] };
  }
  const out: TlsFiles = { ca: names.filter((n) => n.endsWith(".crt")).map((n) => readFileSync(join(dir, n), "utf8")) };
  const cert = names.find((n) => n.endsWith(".cert") && names.includes(`${n.slice(0, -5)}.key`));
  if (cert) {
    out.cert = readFileSync(join(dir, cert), "utf8");
    out.key = readFileSync(join(dir, `${cert.slice(0, -5)}.key`), "utf8");
  }
  return out;
}

function isLoopback(hostname: string): boolean {
  if (hostname === "localhost" || hostname.endsWith(".localhost")) return true;
  if (isIP(hostname) === 4) return hostname.startsWith("127.");
  return hostname === "::1";
}

/** Whether `no-proxy` exempts `host[:port]`. */
function proxyExempt(host: string, noProxy: string): boolean {
  const hostname = hostnameOf(host).toLowerCase();
  if (isLoopback(hostname)) return true;
  for (const raw of noProxy.split(",").map((s) => s.trim().toLowerCase()).filter(Boolean)) {
    if (raw === "*") return true;
    const [addr, bits] = raw.split("/");
    if (bits !== undefined && isIP(addr) && isIP(hostname) === isIP(addr)) {
      const list = new BlockList();
      const family = isIP(addr) === 6 ? "ipv6" : "ipv4";
      list.addSubnet(addr, Number(bits), family);
      if (list.check(hostname, family)) return true;
      continue;
    }
    // `host:port` matches that port only; a bare name any port
    if (raw.includes(":") && isIP(raw) !== 6) {
      if (raw === host.toLowerCase()) return true;
      continue;
    }
    const name = raw.replace(/^\*?\./, "");
    if (hostname === name || hostname.endsWith(`.${name}`)) return true;
  }
  return false;
}

/** The proxy URL for an endpoint, or undefined when it is reached directly. */
function proxyFor(url: URL, proxies: ProxySettings): string | undefined {
  const proxy = url.protocol === "https:" ? proxies.https || proxies.http : proxies.http;
  if (!proxy || proxyExempt(url.host, proxies.noProxy)) return undefined;
  return proxy;
}

/** Dispatchers by their settings; closed with `closeAll` at shutdown. */
export class Transport {
  private readonly cache = new Map<string, Dispatcher>();

  constructor(private readonly proxies: () => ProxySettings, private readonly certsDir = CERTS_DIR) {}

  dispatcherFor(endpoint: Endpoint, url = new URL(endpoint.url)): Dispatcher {
    const files = url.protocol === "https:" ? certsDirFiles(endpoint.host, this.certsDir) : { ca: [] };
    const proxy = proxyFor(url, this.proxies());
    const key = JSON.stringify([endpoint.verifyTls, files, proxy ?? ""]);
    let dispatcher = this.cache.get(key);
    if (!dispatcher) {
      const tls = {
        rejectUnauthorized: endpoint.verifyTls,
        ...(files.ca.length ? { ca: [...rootCertificates, ...files.ca] } : {}),
        ...(files.cert ? { cert: files.cert, key: files.key } : {}),
      };
      const common = { keepAliveTimeout: 30_000, connections: 16, headersTimeout: 60_000, bodyTimeout: 120_000 };
      dispatcher = proxy
        ? new (undici().ProxyAgent)({ uri: proxy, requestTls: tls, ...common })
        : new (undici().Agent)({ connect: tls, ...common });
      this.cache.set(key, dispatcher);
    }
    return dispatcher;
  }

  async closeAll(): Promise<void> {
    const all = [...this.cache.values()];
    this.cache.clear();
    await Promise.all(all.map((d) => d.close().catch(() => undefined)));
  }
}
