/**
 * The network-driver conformance suite: what every network driver must do (core/contracts/
 * network.ts), tested for real, inside network namespaces the suite makes: a "host" namespace
 * per test stands for the daemon's (the driver's bridges, links and rules go there), and each
 * sandbox is a namespace bound to a file, as the daemon binds a container's. Traffic goes only
 * between these namespaces (busybox ping, curl to a busybox httpd in a sandbox); removing the
 * namespaces removes whatever a failed test left.
 *
 * A driver's test calls `networkConformance("<name>", makeDriver, abilities)`; `makeDriver(ctx,
 * hostNs)` makes a driver that works in the namespace bound at `hostNs` (a second call in one
 * test, same context, stands for a daemon restart). The suite runs outside that namespace, so
 * its configuration turns the userland proxy off (a proxy would listen in the suite's own
 * namespace); a driver's name server, which also listens there, is not required to answer.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { NetworkContext, NetworkDriver } from "../core/contracts/network.js";
import { resolveOptions } from "../core/options/resolve.js";
import { makeTempDir } from "./helpers/engined.js";
import { makeNetns, type Netns } from "./helpers/net-daemon.js";
import { networkConformanceLifecycle } from "./network-conformance-lifecycle.js";
import { networkConformanceRestart } from "./network-conformance-restart.js";
import "./helpers/root-hooks.js";

export interface NetworkConformanceAbilities {
  /** Option sets `checkNetwork` refuses (with the options of other networks already there), and what the error says. */
  refused?: { options: Record<string, string>; others?: Record<string, string>[]; message: RegExp }[];
  /** Options that make a network use an interface of the host that the test made (`--bridge`-like): never deleted by the driver. */
  adopt?: (ifname: string) => Record<string, string>;
  /** Options that set the MTU of the network's interfaces. */
  mtu?: (mtu: number) => Record<string, string>;
  /** The driver publishes ports (`EndpointSpec.ports`). */
  publishes?: boolean;
}

export type MakeNetworkDriver = (ctx: NetworkContext, hostNs: string) => NetworkDriver | Promise<NetworkDriver>;

/** What each test gets: its host namespace, sandboxes on demand, drivers, and traffic checks. */
export interface NetworkWorld {
  name: string;
  host: Netns;
  ctx: NetworkContext;
  /** A driver in the host namespace (shut down after the test). */
  driver(): Promise<NetworkDriver>;
  /** A new sandbox: a namespace bound to a file, loopback up. */
  sandbox(): Netns;
  /** A busybox httpd in `ns` on port 80 that answers `/who` with `text` (stopped after the test). */
  serve(ns: Netns, text: string): void;
  abilities: NetworkConformanceAbilities;
}

export function networkConformance(name: string, makeDriver: MakeNetworkDriver, abilities: NetworkConformanceAbilities = {}): void {
  describe(`network driver conformance: ${name}`, function () {
    this.timeout(60_000);
    let namespaces: Netns[] = [];
    let drivers: NetworkDriver[] = [];
    let servers: ChildProcess[] = [];
    const world = { name, abilities } as NetworkWorld; // the rest per test, in beforeEach

    before(function () {
      if (process.getuid?.() !== 0) this.skip();
    });

    beforeEach(function () {
      const host = makeNetns();
      namespaces.push(host);
      const config = { ...resolveOptions(new Map(), {}).config, "userland-proxy": false };
      const warnings: string[] = [];
      const ctx: NetworkContext = {
        config: () => config,
        tag: randomBytes(3).toString("hex"),
        execRoot: makeTempDir("engine-netconf-exec-"),
        log: { warn: (_obj, msg) => warnings.push(msg) },
      };
      Object.assign(world, {
        name,
        host,
        ctx,
        abilities,
        driver: async () => {
          const d = await makeDriver(ctx, host.file);
          drivers.push(d);
          return d;
        },
        sandbox: () => {
          const ns = makeNetns();
          namespaces.push(ns);
          return ns;
        },
        serve: (ns: Netns, text: string) => {
          const dir = makeTempDir("engine-netconf-www-");
          mkdirSync(dir, { recursive: true });
          writeFileSync(join(dir, "who"), text);
          // nsenter execs busybox: the child's pid is the server's
          const child = spawn("nsenter", [`--net=${ns.file}`, "--", "busybox", "httpd", "-f", "-p", "80", "-h", dir], { stdio: "ignore" });
          servers.push(child);
        },
      } satisfies NetworkWorld);
    });

    afterEach(async function () {
      for (const s of servers) s.kill("SIGKILL");
      for (const d of drivers) await d.shutdown().catch(() => undefined);
      // every interface and rule a test made lives in these namespaces, and goes with them
      for (const ns of namespaces.reverse()) ns.remove();
      namespaces = [];
      drivers = [];
      servers = [];
    });

    networkConformanceLifecycle(world);
    networkConformanceRestart(world);
  });
}
