/**
 * The files a pod's containers share: `hostname`, `resolv.conf` (the pod's DNS config, or the
 * node's file when the kubelet gives none, as with dnsPolicy Default) and `hosts` (the node's
 * for a pod on the node's network; else localhost and the pod's own name and address), in the
 * sandbox's folder; containers bind-mount them at /etc/hostname, /etc/resolv.conf, /etc/hosts.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

export interface SandboxFiles {
  hostname: string;
  resolvConf: string;
  hosts: string;
}

export function sandboxFilePaths(dir: string): SandboxFiles {
  return { hostname: join(dir, "hostname"), resolvConf: join(dir, "resolv.conf"), hosts: join(dir, "hosts") };
}

export function resolvConfText(dns: { servers: string[]; searches: string[]; options: string[] }): string {
  const lines = [...dns.servers.map((s) => `nameserver ${s}`)];
  if (dns.searches.length) lines.push(`search ${dns.searches.join(" ")}`);
  if (dns.options.length) lines.push(`options ${dns.options.join(" ")}`);
  return `${lines.join("\n")}\n`;
}

export async function writeSandboxFiles(
  dir: string,
  opts: { hostname: string; dns: { servers: string[]; searches: string[]; options: string[] } | null; hostNetwork: boolean; ips: string[] },
): Promise<SandboxFiles> {
  const paths = sandboxFilePaths(dir);
  await writeFile(paths.hostname, `${opts.hostname}\n`, { mode: 0o644 });
  const resolv = opts.dns ? resolvConfText(opts.dns) : await readFile("/etc/resolv.conf", "utf8").catch(() => "");
  await writeFile(paths.resolvConf, resolv, { mode: 0o644 });
  const hosts = opts.hostNetwork
    ? await readFile("/etc/hosts", "utf8").catch(() => "")
    : [
        "127.0.0.1\tlocalhost",
        "::1\tlocalhost ip6-localhost ip6-loopback",
        "fe00::0\tip6-localnet",
        "fe00::1\tip6-allnodes",
        "fe00::2\tip6-allrouters",
        ...opts.ips.map((ip) => `${ip}\t${opts.hostname}`),
        "",
      ].join("\n");
  await writeFile(paths.hosts, hosts, { mode: 0o644 });
  return paths;
}
