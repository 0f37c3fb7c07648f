/** `engine network create`: a network, with its IPAM settings checked as `docker network create` does. */
import { ExitError, type Command } from "../command.js";
import { keyValueMap } from "../container/units.js";

/** An address or CIDR as a number and its family's width, or undefined. */
function parseIp(text: string): { value: bigint; bits: number } | undefined {
  if (/^\d+\.\d+\.\d+\.\d+$/.test(text)) {
    const parts = text.split(".").map(Number);
    if (parts.some((p) => p > 255)) return undefined;
    return { value: parts.reduce((acc, p) => (acc << 8n) | BigInt(p), 0n), bits: 32 };
  }
  if (!text.includes(":")) return undefined;
  const [head, tail = ""] = text.split("::");
  if (text.split("::").length > 2) return undefined;
  const h = head ? head.split(":") : [];
  const t = tail ? tail.split(":") : [];
  const missing = 8 - h.length - t.length;
  if ((text.includes("::") && missing < 0) || (!text.includes("::") && missing !== 0)) return undefined;
  const groups = [...h, ...Array(text.includes("::") ? missing : 0).fill("0"), ...t];
  if (groups.some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return undefined;
  return { value: groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n), bits: 128 };
}

function parseCidr(text: string): { value: bigint; bits: number; prefix: number } | undefined {
  const slash = text.indexOf("/");
  if (slash < 0) return undefined;
  const ip = parseIp(text.slice(0, slash));
  const prefix = Number(text.slice(slash + 1));
  if (!ip || !/^\d+$/.test(text.slice(slash + 1)) || prefix > ip.bits) return undefined;
  return { ...ip, prefix };
}

/** Whether `data` (an address or a CIDR) lies in `subnet` (Docker's subnetMatches). */
function subnetMatches(subnet: string, data: string): boolean {
  const s = parseCidr(subnet);
  if (!s) throw new ExitError(1, `invalid subnet ${subnet}: invalid CIDR address: ${subnet}`);
  const d = data.includes("/") ? parseCidr(data) : parseIp(data);
  if (!d) throw new ExitError(1, data.includes("/") ? `invalid CIDR address: ${data}` : `invalid address: ${data}`);
  if (d.bits !== s.bits) return false;
  const shift = BigInt(s.bits - s.prefix);
  return d.value >> shift === s.value >> shift;
}

interface IpamConfig {
  Subnet?: string;
  IPRange?: string;
  Gateway?: string;
  AuxiliaryAddresses?: Record<string, string>;
}

/** Docker's consolidateIpam: each range, gateway and aux address goes with the subnet that holds it. */
function consolidateIpam(subnets: string[], ranges: string[], gateways: string[], aux: Record<string, string>): IpamConfig[] {
  if (subnets.length < ranges.length || subnets.length < gateways.length) throw new ExitError(1, "every ip-range or gateway must have a corresponding subnet");
  const data = new Map<string, { Subnet: string; IPRange: string; Gateway: string; AuxAddress: Record<string, string> }>();
  for (const s of subnets) {
    for (const k of data.keys()) if (subnetMatches(s, k) || subnetMatches(k, s)) throw new ExitError(1, "multiple overlapping subnet configuration is not supported");
    data.set(s, { Subnet: s, IPRange: "", Gateway: "", AuxAddress: {} });
  }
  const place = (what: "range" | "gateway", value: string) => {
    let match = false;
    for (const s of subnets) {
      if (!subnetMatches(s, value)) continue;
      const d = data.get(s)!;
      if (what === "range") {
        if (d.IPRange) throw new ExitError(1, `cannot configure multiple ranges (${value}, ${d.IPRange}) on the same subnet (${s})`);
        d.IPRange = value;
      } else {
        if (d.Gateway) throw new ExitError(1, `cannot configure multiple gateways (${value}, ${d.Gateway}) for the same subnet (${s})`);
        d.Gateway = value;
      }
      match = true;
    }
    if (!match) throw new ExitError(1, `no matching subnet for ${what} ${value}`);
  };
  for (const r of ranges) place("range", r);
  for (const g of gateways) place("gateway", g);
  for (const [key, addr] of Object.entries(aux)) {
    let match = false;
    for (const s of subnets) {
      if (!subnetMatches(s, addr)) continue;
      data.get(s)!.AuxAddress[key] = addr;
      match = true;
    }
    if (!match) throw new ExitError(1, `no matching subnet for aux-address ${addr}`);
  }
  return [...data.values()].map((d) => ({
    Subnet: d.Subnet || undefined,
    IPRange: d.IPRange || undefined,
    Gateway: d.Gateway || undefined,
    AuxiliaryAddresses: Object.keys(d.AuxAddress).length ? d.AuxAddress : undefined,
  }));
}

/** A "strings" flag: repeatable, and each value may hold several, comma-separated. */
const strings = (v: unknown) => (v as string[]).flatMap((s) => s.split(",")).filter((s) => s !== "");

export const command: Command = {
  usage: "[OPTIONS] NETWORK",
  flags: [
    { name: "attachable", type: "bool", description: "Enable manual container attachment" },
    { name: "aux-address", type: "list", valueName: "map", description: "Auxiliary IPv4 or IPv6 addresses used by Network driver (default map[])" },
    { name: "config-from", type: "string", description: "The network from which to copy the configuration" },
    { name: "config-only", type: "bool", description: "Create a configuration only network" },
    { name: "driver", short: "d", type: "string", description: "Driver to manage the Network", default: "bridge" },
    { name: "gateway", type: "list", valueName: "strings", description: "IPv4 or IPv6 Gateway for the master subnet" },
    { name: "ingress", type: "bool", description: "Create swarm routing-mesh network" },
    { name: "internal", type: "bool", description: "Restrict external access to the network" },
    { name: "ip-range", type: "list", valueName: "strings", description: "Allocate container ip from a sub-range" },
    { name: "ipam-driver", type: "string", description: "IP Address Management Driver", default: "default" },
    { name: "ipam-opt", type: "list", valueName: "map", description: "Set IPAM driver specific options (default map[])" },
    { name: "ipv4", type: "bool", description: "Enable or disable IPv4 address assignment", default: true },
    { name: "ipv6", type: "bool", description: "Enable or disable IPv6 address assignment" },
    { name: "label", type: "list", description: "Set metadata on a network" },
    { name: "opt", short: "o", type: "list", valueName: "map", description: "Set driver specific options (default map[])" },
    { name: "scope", type: "string", description: "Control the network's scope" },
    { name: "subnet", type: "list", valueName: "strings", description: "Subnet in CIDR format that represents a network segment" },
  ],
  args: { min: 1, max: 1 },
  async run(ctx, { flags, args, given }) {
    const ipam = consolidateIpam(strings(flags.subnet), strings(flags["ip-range"]), strings(flags.gateway), keyValueMap(flags["aux-address"] as string[]));
    const configFrom = flags["config-from"] as string;
    const body = {
      Name: args[0],
      Driver: flags.driver as string,
      Scope: flags.scope as string,
      // only what was asked: the daemon's default applies otherwise
      EnableIPv4: given.has("ipv4") ? flags.ipv4 : undefined,
      EnableIPv6: given.has("ipv6") ? flags.ipv6 : undefined,
      IPAM: { Driver: flags["ipam-driver"] as string, Config: ipam, Options: keyValueMap(flags["ipam-opt"] as string[]) },
      Internal: flags.internal as boolean,
      Attachable: flags.attachable as boolean,
      Ingress: flags.ingress as boolean,
      ConfigOnly: flags["config-only"] as boolean,
      ConfigFrom: configFrom ? { Network: configFrom } : undefined,
      Options: keyValueMap(flags.opt as string[]),
      Labels: keyValueMap(flags.label as string[]),
    };
    const res = await ctx.connection().json<{ Id: string; Warning?: string }>("POST", "/networks/create", { json: body });
    if (res.Warning) ctx.stderr(`WARNING: ${res.Warning}\n`);
    ctx.stdout(`${res.Id}\n`);
    return 0;
  },
};
