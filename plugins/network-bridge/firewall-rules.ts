/**
 * The bridge driver's iptables rules as text, with no command run here (firewall.ts runs them).
 *
 * Every chain name carries the daemon's tag (ENGINE-<tag>, ENGINE-FWD-<tag>, ...), so several
 * daemons in one network namespace each own a disjoint set of chains, and removing one daemon's
 * rules can never delete another's. Rules are written exactly as `iptables-save` prints them, so
 * that the current state can be compared with the wanted one as plain strings: that is what makes
 * every operation idempotent, also after a crash that left half of the rules behind.
 */
import { isIP } from "node:net";

export type Family = 4 | 6;
export type Table = "nat" | "filter" | "raw";

/** One rule: `-A <chain> <spec>` in `*<table>`; `first` puts it at the head of its chain. */
export interface Rule {
  table: Table;
  chain: string;
  spec: string;
  first?: boolean;
}

export interface ChainRef {
  table: Table;
  name: string;
}

export interface NetworkRules {
  /** Interface name of the network's bridge. */
  bridge: string;
  /** CIDRs, IPv4 and/or IPv6 ("172.18.0.0/16", "fd00:1::/64"). */
  subnets: string[];
  /** The bridge's own addresses (the gateways): reachable from anywhere the host is. */
  gateways: string[];
  /** false: containers on this bridge cannot reach each other. */
  icc: boolean;
  /**
   * `--allow-direct-routing`: packets from other interfaces addressed to a container itself
   * (not to a published port of the host) are let through. Without it they are dropped, as
   * Docker 28 does, before any other table sees them.
   */
  directRouting: boolean;
  /** ip-masq: MASQUERADE traffic from the subnet leaving by another interface. */
  masquerade: boolean;
  /**
   * The network's `com.docker.network.host_ipv4` / `host_ipv6`: that traffic leaves with this
   * source (SNAT --to-source) instead of the outgoing interface's (MASQUERADE), as Docker's.
   */
  snatSource?: { 4?: string; 6?: string };
  /** No traffic in or out of the bridge except between its own containers (and icc applies). */
  internal: boolean;
}

export interface PortRule {
  bridge: string;
  proto: "tcp" | "udp" | "sctp";
  /** "0.0.0.0", "::", or a specific address. */
  hostIp: string;
  hostPort: number;
  containerIp: string;
  containerPort: number;
  /**
   * No userland proxy: loopback traffic (127.0.0.1:hostPort from the host) is DNATed too
   * (route_localnet=1 on the bridge, DNAT in OUTPUT for 127/8, MASQUERADE of 127/8 sources out
   * of the bridge), and containers reach the port through the host's addresses (hairpin).
   */
  loopback: boolean;
}

export interface ChainNames {
  /** nat: port DNAT, jumped from PREROUTING and OUTPUT for local destinations. */
  dnat: string;
  /** nat, IPv4 only: DNAT of loopback-enabled ports for 127/8 destinations, jumped from OUTPUT. */
  dnatLoopback: string;
  /** nat: MASQUERADE rules, jumped from POSTROUTING. */
  postrouting: string;
  /** filter: everything the daemon decides in FORWARD. */
  forward: string;
  /** filter: traffic leaving one of this daemon's bridges for another interface ... */
  isolation1: string;
  /** ... is dropped here when that interface is another of this daemon's bridges. */
  isolation2: string;
  /** raw: packets routed straight to a container's address from elsewhere, jumped from PREROUTING. */
  direct: string;
}

const TAG = /^[a-z0-9]{6,8}$/;
// Also what keeps spaces and newlines out of the restore text.
const IFNAME = /^[A-Za-z0-9_.-]{1,15}$/;
const PROTOS = new Set(["tcp", "udp", "sctp"]);

function checkTag(tag: string): void {
  if (!TAG.test(tag)) throw new Error(`firewall tag must be 6 to 8 lowercase letters or digits, got ${JSON.stringify(tag)}`);
}

export function chainNames(tag: string): ChainNames {
  checkTag(tag);
  // The longest, ENGINE-ISOLATION-2-<8 chars>, is 27 characters: within iptables' 28.
  return {
    dnat: `ENGINE-${tag}`,
    dnatLoopback: `ENGINE-LO-${tag}`,
    postrouting: `ENGINE-POST-${tag}`,
    forward: `ENGINE-FWD-${tag}`,
    isolation1: `ENGINE-ISOLATION-1-${tag}`,
    isolation2: `ENGINE-ISOLATION-2-${tag}`,
    direct: `ENGINE-RAW-${tag}`,
  };
}

// ---------------------------------------------------------------------------------------------
// Addresses, written the way iptables-save prints them.

export function familyOf(address: string): Family {
  const v = isIP(address);
  if (v === 0) throw new Error(`not an IP address: ${JSON.stringify(address)}`);
  return v as Family;
}

function expandV6(address: string): number[] {
  // An embedded IPv4 tail ("::ffff:1.2.3.4") is two groups.
  const text = address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_m, a: string, b: string, c: string, d: string) =>
    `${((+a << 8) | +b).toString(16)}:${((+c << 8) | +d).toString(16)}`,
  );
  const parse = (s: string) => (s === "" ? [] : s.split(":").map((h) => parseInt(h, 16)));
  const [head, rest] = text.split("::") as [string, string | undefined];
  const front = parse(head);
  const back = rest === undefined ? [] : parse(rest);
  const zeros = rest === undefined ? 0 : 8 - front.length - back.length;
  const groups = [...front, ...new Array<number>(Math.max(0, zeros)).fill(0), ...back];
  if (groups.length !== 8 || groups.some(Number.isNaN)) throw new Error(`not an IPv6 address: ${address}`);
  return groups;
}

/** The compressed lowercase form (RFC 5952) that iptables prints. */
function canonicalAddress(address: string): string {
  if (familyOf(address) === 4) return address;
  return new URL(`http://[${address}]/`).hostname.slice(1, -1);
}

/** "172.18.0.5/16" → "172.18.0.0/16": iptables keeps only the network part. */
function canonicalCidr(cidr: string): string {
  const slash = cidr.indexOf("/");
  const address = slash < 0 ? cidr : cidr.slice(0, slash);
  const family = familyOf(address);
  const bits = family === 4 ? 32 : 128;
  const prefix = slash < 0 ? bits : Number(cidr.slice(slash + 1));
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > bits) throw new Error(`bad prefix length in ${cidr}`);
  if (family === 4) {
    const n = address.split(".").reduce((acc, b) => acc * 256 + Number(b), 0);
    const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
    const net = (n & mask) >>> 0;
    return `${[24, 16, 8, 0].map((s) => (net >>> s) & 255).join(".")}/${prefix}`;
  }
  const groups = expandV6(address).map((g, i) => {
    const keep = Math.max(0, Math.min(16, prefix - i * 16));
    return keep === 0 ? 0 : g & ((0xffff << (16 - keep)) & 0xffff);
  });
  return `${canonicalAddress(groups.map((g) => g.toString(16)).join(":"))}/${prefix}`;
}

function hostCidr(address: string): string {
  return `${canonicalAddress(address)}/${familyOf(address) === 4 ? 32 : 128}`;
}

function isUnspecified(address: string): boolean {
  return address === "0.0.0.0" || canonicalAddress(address) === "::";
}

function checkBridge(bridge: string): void {
  if (!IFNAME.test(bridge)) throw new Error(`bad bridge name ${JSON.stringify(bridge)}`);
}

function checkPort(port: number, what: string): void {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`bad ${what} ${port}`);
}

// ---------------------------------------------------------------------------------------------
// The rules.

/** The daemon's own chains of one family. */
export function baseChains(tag: string, family: Family): ChainRef[] {
  const c = chainNames(tag);
  return [
    { table: "nat", name: c.dnat },
    ...(family === 4 ? [{ table: "nat" as const, name: c.dnatLoopback }] : []),
    { table: "nat", name: c.postrouting },
    { table: "filter", name: c.forward },
    { table: "filter", name: c.isolation1 },
    { table: "filter", name: c.isolation2 },
    { table: "raw", name: c.direct },
  ];
}

/** The jumps from the built-in chains into the daemon's chains. */
export function baseRules(tag: string, family: Family): Rule[] {
  const c = chainNames(tag);
  const loopback = family === 4 ? "127.0.0.0/8" : "::1/128";
  return [
    { table: "nat", chain: "PREROUTING", spec: `-m addrtype --dst-type LOCAL -j ${c.dnat}` },
    // Loopback destinations are left to the userland proxy, except for the ports that ask for
    // loopback DNAT: those are in their own chain, so the others keep their proxy.
    { table: "nat", chain: "OUTPUT", spec: `! -d ${loopback} -m addrtype --dst-type LOCAL -j ${c.dnat}` },
    ...(family === 4 ? [{ table: "nat" as const, chain: "OUTPUT", spec: `-d ${loopback} -j ${c.dnatLoopback}` }] : []),
    { table: "nat", chain: "POSTROUTING", spec: `-j ${c.postrouting}` },
    { table: "raw", chain: "PREROUTING", spec: `-j ${c.direct}` },
    // First, so that another tool's DROP or REJECT earlier in FORWARD cannot shadow us.
    { table: "filter", chain: "FORWARD", spec: `-j ${c.forward}`, first: true },
    // Isolation must be decided before any ACCEPT of the forward chain.
    { table: "filter", chain: c.forward, spec: `-j ${c.isolation1}`, first: true },
  ];
}

/** The subnets of `n` in `family`, canonical. */
function subnetsOf(n: NetworkRules, family: Family): string[] {
  return n.subnets.filter((s) => familyOf(s.split("/")[0]) === family).map(canonicalCidr);
}

export function networkRules(tag: string, family: Family, n: NetworkRules): Rule[] {
  checkBridge(n.bridge);
  const c = chainNames(tag);
  const br = n.bridge;
  const rules: Rule[] = [
    { table: "filter", chain: c.isolation1, spec: `-i ${br} ! -o ${br} -j ${c.isolation2}` },
    { table: "filter", chain: c.isolation2, spec: `-o ${br} -j DROP` },
  ];
  if (n.internal) {
    rules.push(
      { table: "filter", chain: c.isolation1, spec: `-i ${br} ! -o ${br} -j DROP` },
      { table: "filter", chain: c.isolation1, spec: `! -i ${br} -o ${br} -j DROP` },
    );
  } else {
    rules.push(
      { table: "filter", chain: c.forward, spec: `-o ${br} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT` },
      { table: "filter", chain: c.forward, spec: `-i ${br} ! -o ${br} -j ACCEPT` },
    );
  }
  rules.push({ table: "filter", chain: c.forward, spec: `-i ${br} -o ${br} -j ${n.icc ? "ACCEPT" : "DROP"}` });
  // Without masquerading the replies to the containers' own traffic come back addressed to them,
  // from other interfaces, and raw comes before conntrack could tell them apart: no guard then.
  if (!n.directRouting && n.masquerade && !n.internal) {
    // The gateways first (inserted at the head): the host's own addresses stay reachable.
    for (const gw of n.gateways.filter((g) => familyOf(g) === family)) rules.push({ table: "raw", chain: c.direct, spec: `-d ${hostCidr(gw)} -j RETURN`, first: true });
    for (const subnet of subnetsOf(n, family)) rules.push({ table: "raw", chain: c.direct, spec: `-d ${subnet} ! -i ${br} -j DROP` });
  }
  // An internal network's traffic never leaves it, so there is nothing to masquerade.
  if (n.masquerade && !n.internal) {
    const source = n.snatSource?.[family];
    const target = source ? `SNAT --to-source ${source}` : "MASQUERADE";
    for (const subnet of subnetsOf(n, family)) {
      rules.push({ table: "nat", chain: c.postrouting, spec: `-s ${subnet} ! -o ${br} -j ${target}` });
    }
  }
  return rules;
}

/**
 * Every rule `networkRules` could have made for this bridge and these subnets, whatever the
 * options were when it was added: removal must not depend on being told the same options.
 */
export function networkRuleVariants(tag: string, family: Family, n: NetworkRules): Rule[] {
  const out: Rule[] = [];
  for (const icc of [true, false]) {
    for (const internal of [true, false]) {
      for (const snatSource of [undefined, n.snatSource]) out.push(...networkRules(tag, family, { ...n, icc, internal, masquerade: true, directRouting: false, snatSource }));
    }
  }
  return out;
}

/**
 * A legacy link's rules on a bridge with inter-container traffic off (`--icc=false`), as Docker's
 * ChainInfo.Link writes them: the parent may reach the child's port, and the child's replies from
 * it go back. Ahead of the bridge's DROP. `port` is an exposed port's key (`80/tcp`); anything
 * else has no rule.
 */
export function linkRules(tag: string, bridge: string, parentIp: string, childIp: string, port: string): Rule[] {
  checkBridge(bridge);
  const m = /^(\d+)\/(tcp|udp|sctp)$/.exec(port);
  if (!m) return [];
  checkPort(Number(m[1]), "linked port");
  const c = chainNames(tag);
  const [parent, child] = [hostCidr(canonicalAddress(parentIp)), hostCidr(canonicalAddress(childIp))];
  const proto = `-p ${m[2]} -m ${m[2]}`;
  return [
    { table: "filter", chain: c.forward, spec: `-s ${parent} -d ${child} -i ${bridge} -o ${bridge} ${proto} --dport ${m[1]} -j ACCEPT`, first: true },
    { table: "filter", chain: c.forward, spec: `-s ${child} -d ${parent} -i ${bridge} -o ${bridge} ${proto} --sport ${m[1]} -j ACCEPT`, first: true },
  ];
}

/** The link rules of the forward chain in `state` that name `address` on `bridge` (either side). */
export function linkRulesOf(tag: string, state: SaveState, bridge: string, address: string): Rule[] {
  const c = chainNames(tag);
  const own = hostCidr(canonicalAddress(address));
  const shape = new RegExp(`^-s (\\S+) -d (\\S+) -i ${bridge.replace(/[.]/g, "\\.")} -o ${bridge.replace(/[.]/g, "\\.")} -p (tcp|udp|sctp) -m \\3 --[ds]port \\d+ -j ACCEPT$`);
  return state.filter.rules
    .filter((rule) => rule.startsWith(`${c.forward} `))
    .map((rule) => rule.slice(c.forward.length + 1))
    .filter((spec) => {
      const m = shape.exec(spec);
      return !!m && (m[1] === own || m[2] === own);
    })
    .map((spec) => ({ table: "filter" as const, chain: c.forward, spec }));
}

export function portFamily(p: PortRule): Family {
  return familyOf(p.containerIp);
}

export interface PortRuleSet {
  /** The rules of this host binding alone (its DNAT). */
  own: Rule[];
  /** Rules about the container's address and port, shared by every binding to it. */
  perTarget: Rule[];
}

export function portRules(tag: string, p: PortRule): PortRuleSet {
  checkBridge(p.bridge);
  if (!PROTOS.has(p.proto)) throw new Error(`bad protocol ${p.proto}`);
  checkPort(p.hostPort, "host port");
  checkPort(p.containerPort, "container port");
  const family = portFamily(p);
  const any = isUnspecified(p.hostIp);
  if (!any && familyOf(p.hostIp) !== family) throw new Error(`host address ${p.hostIp} and container address ${p.containerIp} are of different families`);
  const c = chainNames(tag);
  const br = p.bridge;
  const proto = `-p ${p.proto} -m ${p.proto}`;
  const cip = canonicalAddress(p.containerIp);
  const target = family === 4 ? `${cip}:${p.containerPort}` : `[${cip}]:${p.containerPort}`;
  const dest = any ? "" : `-d ${hostCidr(p.hostIp)} `;
  // With the userland proxy, containers reach a port through the host's addresses by the
  // proxy, so traffic from the bridge must not be DNATed; without it (hairpin) it must be.
  const notFromBridge = p.loopback ? "" : `! -i ${br} `;
  const own: Rule[] = [{ table: "nat", chain: c.dnat, spec: `${dest}${notFromBridge}${proto} --dport ${p.hostPort} -j DNAT --to-destination ${target}` }];
  const perTarget: Rule[] = [
    { table: "filter", chain: c.forward, spec: `-d ${hostCidr(cip)} ! -i ${br} -o ${br} ${proto} --dport ${p.containerPort} -j ACCEPT` },
  ];
  if (p.loopback) {
    // A container reaching its own published port: its reply would go to itself, not back
    // through the NAT, unless the source is rewritten.
    perTarget.push({
      table: "nat",
      chain: c.postrouting,
      spec: `-s ${hostCidr(cip)} -d ${hostCidr(cip)} ${proto} --dport ${p.containerPort} -j MASQUERADE`,
    });
    if (family === 4 && (any || p.hostIp.startsWith("127."))) {
      own.push({ table: "nat", chain: c.dnatLoopback, spec: `${dest}${proto} --dport ${p.hostPort} -j DNAT --to-destination ${target}` });
      // A 127/8 source cannot leave the host: it becomes the bridge's address.
      perTarget.push({
        table: "nat",
        chain: c.postrouting,
        spec: `-s 127.0.0.0/8 -d ${hostCidr(cip)} -o ${br} ${proto} --dport ${p.containerPort} -j MASQUERADE`,
      });
    }
  }
  return { own, perTarget };
}

/** Both loopback variants: removal must not depend on being told the same flag. */
export function portRuleVariants(tag: string, p: PortRule): PortRuleSet {
  const a = portRules(tag, { ...p, loopback: true });
  const b = portRules(tag, { ...p, loopback: false });
  return { own: [...a.own, ...b.own], perTarget: [...a.perTarget, ...b.perTarget] };
}

/** "proto target" of a DNAT rule of ours ("tcp 172.18.0.2:80"), or null. */
export function dnatTarget(spec: string): string | null {
  const m = / -p (\w+) .*-j DNAT --to-destination (\S+)$/.exec(` ${spec}`);
  return m ? `${m[1]} ${m[2]}` : null;
}

/** What a port's DNAT rule (`portRules(...).own`, as iptables-save prints it) publishes, or null for another rule. */
export function parsePortDnat(spec: string): Omit<PortRule, "bridge" | "loopback"> | null {
  const m = /^(?:-d (\S+)\/\d+ )?(?:! -i \S+ )?-p (tcp|udp|sctp) -m \w+ --dport (\d+) -j DNAT --to-destination \[?([^\]\s]+?)\]?:(\d+)$/.exec(spec);
  if (!m) return null;
  const containerIp = m[4];
  const hostIp = m[1] ?? (familyOf(containerIp) === 4 ? "0.0.0.0" : "::");
  return { proto: m[2] as PortRule["proto"], hostIp, hostPort: Number(m[3]), containerIp, containerPort: Number(m[5]) };
}

// ---------------------------------------------------------------------------------------------
// Current state (iptables-save) and the batches (iptables-restore --noflush) that change it.

export interface TableState {
  chains: Set<string>;
  /** "<chain> <spec>", in order, duplicates kept. */
  rules: string[];
}

export type SaveState = Record<Table, TableState>;

export function parseSave(text: string): SaveState {
  const state: SaveState = { nat: { chains: new Set(), rules: [] }, filter: { chains: new Set(), rules: [] }, raw: { chains: new Set(), rules: [] } };
  let table: TableState | undefined;
  for (const line of text.split("\n")) {
    if (line.startsWith("*")) table = line === "*nat" ? state.nat : line === "*filter" ? state.filter : line === "*raw" ? state.raw : undefined;
    else if (!table) continue;
    else if (line.startsWith(":")) table.chains.add(line.slice(1).split(" ")[0]);
    else if (line.startsWith("-A ")) table.rules.push(line.slice(3));
  }
  return state;
}

function key(r: Rule): string {
  return `${r.chain} ${r.spec}`;
}

function jumpTarget(rule: string): string | undefined {
  const t = rule.split(" ");
  const i = t.findIndex((w) => w === "-j" || w === "-g");
  return i >= 0 ? t[i + 1] : undefined;
}

function batch(lines: Record<Table, string[]>): string {
  return (["filter", "nat", "raw"] as const)
    .filter((t) => lines[t].length > 0)
    .map((t) => `*${t}\n${lines[t].join("\n")}\nCOMMIT\n`)
    .join("");
}

export interface Change {
  /** Chains to create when missing. */
  chains?: ChainRef[];
  /** Rules to add when missing (and keep once when present more than once). */
  add?: Rule[];
  /** Rules to delete, every copy present, unless they are also in `add`. */
  remove?: Rule[];
}

/** The restore text that makes the change from `state`; "" when there is nothing to do. */
export function planChange(state: SaveState, change: Change): string {
  const lines: Record<Table, string[]> = { nat: [], filter: [], raw: [] };
  const count = (r: Rule) => state[r.table].rules.filter((x) => x === key(r)).length;
  const wanted = new Map<string, Rule>();
  for (const r of change.add ?? []) if (!wanted.has(`${r.table} ${key(r)}`)) wanted.set(`${r.table} ${key(r)}`, r);
  const unwanted = new Map<string, Rule>();
  for (const r of change.remove ?? []) {
    const k = `${r.table} ${key(r)}`;
    if (!wanted.has(k) && !unwanted.has(k)) unwanted.set(k, r);
  }
  for (const ch of change.chains ?? []) if (!state[ch.table].chains.has(ch.name)) lines[ch.table].push(`-N ${ch.name}`);
  for (const r of unwanted.values()) for (let i = count(r); i > 0; i--) lines[r.table].push(`-D ${r.chain} ${r.spec}`);
  for (const r of wanted.values()) {
    const n = count(r);
    if (n === 0) lines[r.table].push(r.first ? `-I ${r.chain} 1 ${r.spec}` : `-A ${r.chain} ${r.spec}`);
    for (let i = n; i > 1; i--) lines[r.table].push(`-D ${r.chain} ${r.spec}`);
  }
  return batch(lines);
}

/** The restore text that removes the given chains and every rule that jumps to them. */
export function planRemoveChains(state: SaveState, chains: ChainRef[]): string {
  const lines: Record<Table, string[]> = { nat: [], filter: [], raw: [] };
  for (const table of ["nat", "filter", "raw"] as const) {
    const ours = new Set(chains.filter((c) => c.table === table && state[table].chains.has(c.name)).map((c) => c.name));
    for (const rule of state[table].rules) {
      const chain = rule.split(" ")[0];
      const target = jumpTarget(rule);
      if (!ours.has(chain) && target !== undefined && ours.has(target)) lines[table].push(`-D ${rule}`);
    }
    // Flush all before deleting any: our chains jump to each other.
    for (const name of ours) lines[table].push(`-F ${name}`);
    for (const name of ours) lines[table].push(`-X ${name}`);
  }
  return batch(lines);
}
