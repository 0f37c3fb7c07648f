/**
 * Which addresses a pull or push of a repository tries, in order, and how each is secured.
 * The spec's rules: a registry is secure (TLS verified against the system CAs and
 * `/etc/engine/certs.d/<host:port>/ca.crt`) unless it is named in `insecure-registry` by
 * `host:port`, or its address falls in one of the insecure CIDRs (`127.0.0.0/8` and `::1/128`
 * always, plus the CIDRs given). An insecure registry is tried with TLS unverified, then with
 * plain HTTP. Docker Hub pulls try the `registry-mirror`s first, then Docker Hub itself.
 */
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { DEFAULT_DOMAIN } from "../../core/images/reference.js";

/** Docker Hub's registry API (the index name `docker.io` is not where its API lives). */
const HUB_REGISTRY = "registry-1.docker.io";
export const CERTS_DIR = "/etc/engine/certs.d";

export interface Endpoint {
  /** `https://127.0.0.1:5000`, no trailing slash (a mirror may carry a path prefix). */
  url: string;
  /** `host:port` as in certs.d and in the insecure list. */
  host: string;
  /** Verify the server's certificate (false for an insecure registry's TLS attempt). */
  verifyTls: boolean;
  mirror: boolean;
  /** Whether the registry counts as insecure (so a failure should not suggest the flag). */
  insecure: boolean;
}

export interface RegistrySettings {
  insecureRegistries: readonly string[];
  mirrors: readonly string[];
}

const ALWAYS_INSECURE = ["127.0.0.0/8", "::1/128"];

/** The insecure CIDRs and names of `insecure-registry` entries. */
function insecureRules(entries: readonly string[]): { cidrs: BlockList; names: Set<string> } {
  const cidrs = new BlockList();
  const names = new Set<string>();
  for (const entry of [...ALWAYS_INSECURE, ...entries]) {
    const [addr, bits] = entry.split("/");
    const family = isIP(addr);
    if (family && bits !== undefined) cidrs.addSubnet(addr, Number(bits), family === 6 ? "ipv6" : "ipv4");
    else names.add(entry.replace(/^[a-z]+:\/\//, "").replace(/\/+$/, ""));
  }
  return { cidrs, names };
}

/** `host:port` -> `host` (IPv6 in brackets loses them). */
export function hostnameOf(host: string): string {
  if (host.startsWith("[")) return host.slice(1, host.indexOf("]"));
  const colon = host.lastIndexOf(":");
  return colon > 0 && host.indexOf(":") === colon ? host.slice(0, colon) : host;
}

const inList = (list: BlockList, ip: string) => list.check(ip, isIP(ip) === 6 ? "ipv6" : "ipv4");

/**
 * Whether a registry (`host[:port]`) is insecure. A name the list holds is; otherwise its
 * addresses are looked up (an IP literal is its own address) and checked against the CIDRs.
 * A name that does not resolve is secure: the connection will say what is wrong.
 */
async function isInsecure(host: string, settings: RegistrySettings): Promise<boolean> {
  if (host === DEFAULT_DOMAIN || host === HUB_REGISTRY) return false;
  const { cidrs, names } = insecureRules(settings.insecureRegistries);
  if (names.has(host)) return true;
  const name = hostnameOf(host);
  if (names.has(name) && !host.includes(":")) return true;
  if (isIP(name)) return inList(cidrs, name);
  try {
    const addresses = await lookup(name, { all: true });
    return addresses.some((a) => inList(cidrs, a.address));
  } catch {
    return false;
  }
}

/** The endpoints to try for a repository on `domain` (`docker.io`, `127.0.0.1:5000`, ...). */
export async function endpointsFor(domain: string, purpose: "pull" | "push" | "login", settings: RegistrySettings): Promise<Endpoint[]> {
  const out: Endpoint[] = [];
  if (domain === DEFAULT_DOMAIN) {
    if (purpose === "pull") {
      for (const mirror of settings.mirrors) {
        const url = new URL(mirror);
        const insecure = url.protocol === "http:" || (await isInsecure(url.host, settings));
        out.push({ url: mirror.replace(/\/+$/, ""), host: url.host, verifyTls: url.protocol === "https:" && !insecure, mirror: true, insecure });
      }
    }
    out.push({ url: `https://${HUB_REGISTRY}`, host: HUB_REGISTRY, verifyTls: true, mirror: false, insecure: false });
    return out;
  }
  const insecure = await isInsecure(domain, settings);
  out.push({ url: `https://${domain}`, host: domain, verifyTls: !insecure, mirror: false, insecure });
  if (insecure) out.push({ url: `http://${domain}`, host: domain, verifyTls: false, mirror: false, insecure });
  return out;
}
