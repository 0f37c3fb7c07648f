/**
 * `engine port`: a container's published ports ("80/tcp -> 0.0.0.0:8080", in natural order),
 * or the host addresses of one private port (tcp unless a protocol is given).
 */
import { ExitError, type Command } from "../command.js";
import { naturalLess } from "../format/network-context.js";

interface Binding {
  HostIp?: string;
  HostPort?: string;
}

/** Go's net.JoinHostPort: an IPv6 address in brackets. */
const joinHostPort = (host: string, port: string) => (host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`);

/** Go's strconv.ParseUint(port, 10, 16) error, or undefined for a valid port. */
function portError(port: string): string | undefined {
  if (!/^\d+$/.test(port)) return `strconv.ParseUint: parsing "${port}": invalid syntax`;
  if (Number(port) > 65535) return `strconv.ParseUint: parsing "${port}": value out of range`;
  return undefined;
}

export const command: Command = {
  usage: "CONTAINER [PRIVATE_PORT[/PROTO]]",
  flags: [],
  args: { min: 1, max: 2 },
  async run(ctx, { args }) {
    const [name, wanted] = args;
    const c = await ctx.connection().getJson<{ NetworkSettings?: { Ports?: Record<string, Binding[] | null> | null } }>(`/containers/${encodeURIComponent(name)}/json`);
    const ports = c.NetworkSettings?.Ports ?? {};
    const out: string[] = [];
    if (wanted !== undefined) {
      const slash = wanted.indexOf("/");
      const port = slash < 0 ? wanted : wanted.slice(0, slash);
      const proto = slash < 0 || wanted.slice(slash + 1) === "" ? "tcp" : wanted.slice(slash + 1);
      const bad = portError(port);
      if (bad) throw new ExitError(1, `Error: invalid port (${port}): ${bad}`);
      const frontends = ports[`${port}/${proto}`] ?? [];
      if (frontends.length === 0) throw new ExitError(1, `Error: No public port '${wanted}' published for ${name}`);
      for (const f of frontends) out.push(joinHostPort(f.HostIp ?? "", f.HostPort ?? ""));
    } else {
      for (const [from, frontends] of Object.entries(ports)) for (const f of frontends ?? []) out.push(`${from} -> ${joinHostPort(f.HostIp ?? "", f.HostPort ?? "")}`);
    }
    out.sort((a, b) => (naturalLess(a, b) ? -1 : naturalLess(b, a) ? 1 : 0));
    if (out.length) ctx.stdout(`${out.join("\n")}\n`);
    return 0;
  },
};
