/**
 * The iptables side of the bridge driver, as Docker's daemon does it: port DNAT, masquerading,
 * the FORWARD decisions (icc, internal networks, isolation between this daemon's networks) and
 * the forwarding sysctls. Every chain name carries the daemon's tag (firewall-rules.ts), so
 * several daemons in one namespace never touch each other's rules.
 *
 * Each change reads the state with one `iptables-save` and applies what is missing (or present,
 * for a removal) in one `iptables-restore --noflush` batch per address family: idempotent, also
 * after a crash that left rules behind, and atomic per table. A family that is off
 * (--iptables=false, --ip6tables=false) gets no command at all.
 */
import type { LegacyLink } from "../../core/contracts/network.js";
import type { CommandRunner } from "../../core/net/commands.js";
import {
  baseChains,
  baseRules,
  type ChainNames,
  chainNames,
  dnatTarget,
  type Family,
  familyOf,
  linkRules,
  linkRulesOf,
  type NetworkRules,
  networkRules,
  networkRuleVariants,
  parsePortDnat,
  parseSave,
  planChange,
  planRemoveChains,
  portFamily,
  type PortRule,
  portRules,
  portRuleVariants,
  type SaveState,
} from "./firewall-rules.js";

export type { NetworkRules, PortRule } from "./firewall-rules.js";

export interface FirewallConfig {
  /** Short per-daemon tag (6-8 lowercase letters or digits) put in every chain name. */
  tag: string;
  runner: CommandRunner;
  /** --iptables: false means this class adds no IPv4 rule at all. */
  ipv4: boolean;
  /** --ip6tables (and only used for networks with IPv6 subnets). */
  ipv6: boolean;
}

const TOOLS = {
  4: { save: "iptables-save", restore: "iptables-restore", tables: "iptables" },
  6: { save: "ip6tables-save", restore: "ip6tables-restore", tables: "ip6tables" },
} as const;

export class Firewall {
  private readonly names: ChainNames;
  /** Operations run one at a time: each is a read of the state followed by a change based on it. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly config: FirewallConfig) {
    this.names = chainNames(config.tag);
  }

  /** Creates this daemon's chains and the jumps to them from the built-in chains (idempotent). */
  ensureBase(): Promise<void> {
    return this.serialized(async () => {
      for (const family of this.enabledFamilies()) {
        await this.apply(family, (state) => planChange(state, { chains: baseChains(this.config.tag, family), add: baseRules(this.config.tag, family) }));
      }
    });
  }

  /** Idempotent; rules left by the same bridge with other options (icc, internal) are replaced. */
  addNetwork(n: NetworkRules): Promise<void> {
    return this.serialized(async () => {
      for (const family of this.networkFamilies(n)) {
        const wanted = networkRules(this.config.tag, family, n);
        await this.apply(family, (state) =>
          planChange(state, {
            chains: baseChains(this.config.tag, family),
            add: [...baseRules(this.config.tag, family), ...wanted],
            remove: networkRuleVariants(this.config.tag, family, n),
          }),
        );
      }
    });
  }

  /** Idempotent; removes only that network's rules, whatever its options were. */
  removeNetwork(n: NetworkRules): Promise<void> {
    return this.serialized(async () => {
      for (const family of this.networkFamilies(n)) {
        await this.apply(family, (state) => planChange(state, { remove: networkRuleVariants(this.config.tag, family, n) }));
      }
    });
  }

  addPort(p: PortRule): Promise<void> {
    return this.serialized(async () => {
      const family = portFamily(p);
      if (!this.enabled(family)) return;
      const wanted = portRules(this.config.tag, p);
      // Without it the kernel drops a 127/8 source on the way out of the bridge, DNAT or not.
      if (p.loopback && family === 4) await this.sysctl(`net/ipv4/conf/${p.bridge}/route_localnet`, "1");
      await this.apply(family, (state) =>
        planChange(state, {
          chains: baseChains(this.config.tag, family),
          add: [...baseRules(this.config.tag, family), ...wanted.own, ...wanted.perTarget],
          // The same binding with the other loopback flag, from before a restart.
          remove: portRuleVariants(this.config.tag, p).own,
        }),
      );
    });
  }

  /** Idempotent; keeps the rules about the container's port while another binding uses them. */
  removePort(p: PortRule): Promise<void> {
    return this.serialized(async () => {
      const family = portFamily(p);
      if (!this.enabled(family)) return;
      const all = portRuleVariants(this.config.tag, p);
      await this.apply(family, (state) => {
        const own = new Set(all.own.map((r) => `${r.chain} ${r.spec}`));
        const target = dnatTarget(all.own[0].spec);
        const stillUsed = state.nat.rules.some((rule) => {
          const [chain, ...spec] = rule.split(" ");
          return !own.has(rule) && (chain === this.names.dnat || chain === this.names.dnatLoopback) && dnatTarget(spec.join(" ")) === target;
        });
        return planChange(state, { remove: stillUsed ? all.own : [...all.own, ...all.perTarget] });
      });
    });
  }

  /** Opens a bridge with `--icc=false` to legacy links (IPv4, as Docker's links are). */
  addLinks(bridge: string, links: readonly LegacyLink[]): Promise<void> {
    return this.serialized(async () => {
      if (!this.enabled(4)) return;
      const add = links.flatMap((l) => l.ports.flatMap((port) => linkRules(this.config.tag, bridge, l.parentIp, l.childIp, port)));
      if (add.length) await this.apply(4, (state) => planChange(state, { add }));
    });
  }

  /** Closes one legacy link (removed while both its containers run). */
  removeLink(bridge: string, link: LegacyLink): Promise<void> {
    return this.serialized(async () => {
      if (!this.enabled(4)) return;
      const remove = link.ports.flatMap((port) => linkRules(this.config.tag, bridge, link.parentIp, link.childIp, port));
      if (remove.length) await this.apply(4, (state) => planChange(state, { remove }));
    });
  }

  /** Closes every legacy link of `address` on `bridge` again (its container left the network). */
  removeLinksOf(bridge: string, address: string): Promise<void> {
    return this.serialized(async () => {
      if (!this.enabled(4) || familyOf(address) !== 4) return;
      await this.apply(4, (state) => planChange(state, { remove: linkRulesOf(this.config.tag, state, bridge, address) }));
    });
  }

  /**
   * The ports this daemon's DNAT chains publish now, in each family that is on (without the
   * bridge and loopback flag, which `removePort` does not need to be told right).
   */
  publishedPorts(): Promise<Omit<PortRule, "bridge" | "loopback">[]> {
    return this.serialized(async () => {
      const found = new Map<string, Omit<PortRule, "bridge" | "loopback">>();
      for (const family of this.enabledFamilies()) {
        const state = parseSave(await this.config.runner(TOOLS[family].save, []));
        for (const rule of state.nat.rules) {
          const [chain, ...spec] = rule.split(" ");
          if (chain !== this.names.dnat && chain !== this.names.dnatLoopback) continue;
          const port = parsePortDnat(spec.join(" "));
          if (port) found.set(JSON.stringify(port), port);
        }
      }
      return [...found.values()];
    });
  }

  /** Removes every chain with this tag and every jump to one, in each family that is on. */
  removeAll(): Promise<void> {
    return this.serialized(async () => {
      for (const family of this.enabledFamilies()) {
        // The IPv4 set is the superset: it also clears an IPv6 chain of that name, should one exist.
        await this.apply(family, (state) => planRemoveChains(state, baseChains(this.config.tag, 4)));
      }
    });
  }

  /**
   * IP forwarding for the families asked (`ipv4`, default true; `ipv6`, default whether ip6tables
   * rules are on): when `enable`, each key that is off is turned on (net.ipv4.ip_forward;
   * net.ipv6.conf.default.forwarding and .all.forwarding) and, unless `noDrop`, a family whose
   * keys changed gets the filter FORWARD policy DROP when its rules are on (Docker 28's
   * setupIPv4Forwarding/setupIPv6Forwarding, --ip-forward / --ip-forward-no-drop): the host was
   * not a router before, and must not become an open one. A family whose rules are off still
   * gets its forwarding (routing is needed either way) and keeps its policy, which no rule of
   * ours would open. Returns what it changed.
   */
  setForwarding(opts: { enable: boolean; noDrop: boolean; ipv4?: boolean; ipv6?: boolean }): Promise<{ enabled: boolean; policyDropped: boolean }> {
    return this.serialized(async () => {
      const changed = { enabled: false, policyDropped: false };
      if (!opts.enable) return changed;
      const families: [Family, string[]][] = [];
      if (opts.ipv4 ?? true) families.push([4, ["net.ipv4.ip_forward"]]);
      if (opts.ipv6 ?? this.config.ipv6) families.push([6, ["net.ipv6.conf.default.forwarding", "net.ipv6.conf.all.forwarding"]]);
      for (const [family, keys] of families) {
        let turnedOn = false;
        for (const key of keys) {
          if ((await this.config.runner("sysctl", ["-n", key])).trim() === "1") continue;
          await this.sysctl(key, "1");
          turnedOn = true;
        }
        if (!turnedOn) continue;
        changed.enabled = true;
        if (!opts.noDrop && this.enabled(family)) {
          await this.config.runner(TOOLS[family].tables, ["-w", "-P", "FORWARD", "DROP"]);
          changed.policyDropped = true;
        }
      }
      return changed;
    });
  }

  /** net.bridge.bridge-nf-call-iptables (and -ip6tables) = 1, so that bridged traffic passes FORWARD (icc=false). */
  enableBridgeNetfilter(): Promise<void> {
    return this.serialized(async () => {
      for (const family of this.enabledFamilies()) {
        const key = family === 4 ? "net.bridge.bridge-nf-call-iptables" : "net.bridge.bridge-nf-call-ip6tables";
        try {
          await this.sysctl(key, "1");
        } catch (err) {
          // The keys exist only once br_netfilter is loaded; when it cannot be, say why the key failed.
          try {
            await this.config.runner("modprobe", ["br_netfilter"]);
          } catch {
            throw err;
          }
          await this.sysctl(key, "1");
        }
      }
    });
  }

  private enabled(family: Family): boolean {
    return family === 4 ? this.config.ipv4 : this.config.ipv6;
  }

  private enabledFamilies(): Family[] {
    return ([4, 6] as const).filter((f) => this.enabled(f));
  }

  /** IPv4 for a network with an IPv4 subnet (or none at all), IPv6 for one with an IPv6 subnet. */
  private networkFamilies(n: NetworkRules): Family[] {
    const families = new Set(n.subnets.map((s) => familyOf(s.split("/")[0])));
    if (families.size === 0) families.add(4);
    return this.enabledFamilies().filter((f) => families.has(f));
  }

  private async sysctl(key: string, value: string): Promise<void> {
    await this.config.runner("sysctl", ["-q", "-w", `${key}=${value}`]);
  }

  private async apply(family: Family, plan: (state: SaveState) => string): Promise<void> {
    const tools = TOOLS[family];
    for (let attempt = 0; ; attempt++) {
      const state = parseSave(await this.config.runner(tools.save, []));
      const text = plan(state);
      if (text === "") return;
      try {
        await this.config.runner(tools.restore, ["-w", "--noflush"], { input: text });
        return;
      } catch (err) {
        // A batch fails whole when the state changed between the read and the write (another
        // program deleted a rule this batch deletes): plan again from a fresh read, once.
        if (attempt >= 1) throw err;
      }
    }
  }

  private serialized<T>(op: () => Promise<T>): Promise<T> {
    const run = this.queue.then(op, op);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
