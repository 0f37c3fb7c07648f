/**
 * The three files that tell a container about its network, written into its folder before each
 * start and bind-mounted over the image's: `/etc/resolv.conf` (the host's resolvers without the
 * loopback ones, or `--dns`/`Dns`...), `/etc/hosts` (its own addresses under its hostname, and
 * `ExtraHosts` with `host-gateway` resolved) and `/etc/hostname`. With NetworkMode `host`,
 * as in Docker, the host's own files and hostname.
 */
import { chownSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ContainerRecord } from "../../core/containers/container-store.js";
import { hostnameFile, hostsFile } from "../../core/network/hosts-file.js";
import { containerResolvConf, hostResolvConfPath, ETC_RESOLV_CONF, SYSTEMD_RESOLV_CONF } from "../../core/network/resolv-conf.js";
import type { DaemonConfig } from "../../core/options/table.js";

export interface FilePaths {
  hosts: string;
  resolvConf: string;
  hostname: string;
}

/** Where a container's three files are kept: in its folder of the data root. */
export function networkFilePaths(containerDir: string): FilePaths {
  return { hosts: join(containerDir, "hosts"), resolvConf: join(containerDir, "resolv.conf"), hostname: join(containerDir, "hostname") };
}

export interface FileInputs {
  c: ContainerRecord;
  config: DaemonConfig;
  /** `none`, `host`, or a network's name. */
  mode: string;
  /** The container's own addresses (no prefix length). */
  addresses: string[];
  hostGateway: string[];
  /** The network's name server (user-defined networks): the only one in resolv.conf. */
  nameserver?: string;
  /** The legacy links' lines (`[address, names]`), after ExtraHosts. */
  linkedHosts?: readonly (readonly [string, string])[];
  /** Who the files belong to: the remapped root under `--userns-remap` (so container root may change them), else root. */
  owner?: { uid: number; gid: number };
}

function readOr(path: string, fallback: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return fallback;
  }
}

/** The host's resolv.conf as Docker picks it (systemd-resolved's real one behind its stub). */
export function hostResolvConf(): { text: string; path: string } {
  const etc = readOr(ETC_RESOLV_CONF, "");
  const path = hostResolvConfPath(etc, existsSync(SYSTEMD_RESOLV_CONF));
  return { text: path === ETC_RESOLV_CONF ? etc : readOr(path, ""), path };
}

/**
 * Whether the container's loopback will have ::1, which decides the IPv6 names of its /etc/hosts
 * as in Docker (moby's Sandbox.IPv6Enabled looks at the container's loopback, not at its
 * networks): yes, unless the kernel has no IPv6 or the container's own sysctls turn it off for
 * every interface or the loopback.
 */
function loopbackHasIpv6(sysctls: Record<string, string> | null | undefined): boolean {
  if (!existsSync("/proc/sys/net/ipv6")) return false;
  const off = (key: string) => sysctls?.[key]?.trim() === "1";
  return !off("net.ipv6.conf.all.disable_ipv6") && !off("net.ipv6.conf.lo.disable_ipv6");
}

export function containerFiles(paths: FilePaths, input: FileInputs): void {
  writeContainerFiles(paths, input);
  const owner = input.owner;
  if (owner) for (const file of [paths.resolvConf, paths.hosts, paths.hostname]) chownSync(file, owner.uid, owner.gid);
}

function writeContainerFiles(paths: FilePaths, input: FileInputs): void {
  const { c, config, mode } = input;
  const host = hostResolvConf();
  const dns = {
    container: { dns: c.HostConfig.Dns ?? [], dnsOptions: c.HostConfig.DnsOptions ?? [], dnsSearch: c.HostConfig.DnsSearch ?? [] },
    daemon: { dns: config.dns, dnsOptions: config["dns-opt"], dnsSearch: config["dns-search"] },
  };
  if (mode === "host") {
    // the host's file, with the container's or the daemon's --dns, --dns-search and --dns-opt
    // over it (Docker 28 writes it so; moby's TestDaemonDNSFlagsInHostMode)
    const resolv = containerResolvConf({ hostResolvConf: host.text, hostResolvConfPath: host.path, ...dns, ipv6: true, hostNetwork: true });
    writeFileSync(paths.resolvConf, resolv.content, { mode: 0o644 });
    // the host's hosts file; with --add-host, Docker's own one with those entries instead (its
    // sandbox builds the file then, without the host's entries)
    const extraHosts = c.HostConfig.ExtraHosts ?? [];
    const hosts = extraHosts.length
      ? hostsFile({ hostname: "", addresses: [], extraHosts, hostGatewayIps: input.hostGateway, ipv6: loopbackHasIpv6(c.HostConfig.Sysctls) })
      : readOr("/etc/hosts", hostsFile({ hostname: c.Config.Hostname ?? "", addresses: [] }));
    writeFileSync(paths.hosts, hosts, { mode: 0o644 });
    writeFileSync(paths.hostname, hostnameFile(readOr("/etc/hostname", "").trim() || (c.Config.Hostname ?? "")), { mode: 0o644 });
    return;
  }
  const ipv6 = input.addresses.some((a) => a.includes(":"));
  const resolv = containerResolvConf({
    hostResolvConf: host.text,
    hostResolvConfPath: host.path,
    ...dns,
    ...(input.nameserver ? { embeddedDns: input.nameserver } : {}),
    ipv6,
  });
  writeFileSync(paths.resolvConf, resolv.content, { mode: 0o644 });
  writeFileSync(
    paths.hosts,
    hostsFile({
      hostname: c.Config.Hostname ?? "",
      domainname: c.Config.Domainname || undefined,
      addresses: input.addresses,
      extraHosts: c.HostConfig.ExtraHosts ?? [],
      hostGatewayIps: input.hostGateway,
      linkedHosts: input.linkedHosts ?? [],
      ipv6: loopbackHasIpv6(c.HostConfig.Sysctls),
    }),
    { mode: 0o644 },
  );
  writeFileSync(paths.hostname, hostnameFile(c.Config.Hostname ?? ""), { mode: 0o644 });
}
