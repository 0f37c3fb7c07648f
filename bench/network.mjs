// Benchmark: a container's run with the default bridge network next to the same run without a
// network, for engined and, when `dockerd` is installed, for Docker's daemon in the same run.
// Each daemon runs in a network namespace of its own WITH its default bridge (engined's engine0
// on 10.201.0.1/24, Docker's docker0 on 10.202.0.1/24; bench/daemons.mjs): the bridge, the
// containers' veths and the daemon's iptables rules are made there and go with it. Numbers are
// printed side by side with ratios; nothing is asserted.
//
//   1. `docker run --rm busybox true` (no --network: the default bridge) and
//      `docker run --rm --network none busybox true` through the Docker CLI;
//   2. create+start+wait+remove of `busybox true` over the API, NetworkMode `default` and `none`.
//
// The two kinds alternate run by run (bridge first, then none first), so that a busy moment of
// the machine falls on both. Before timing, one `docker run --rm busybox ip -o -4 addr show eth0`
// checks that a container does get an address on the bench's bridge.
//
//   node_modules/node/bin/node bench/network.mjs [--runs N] [--only engined|dockerd]
import { mkdtempSync, rmSync } from "node:fs";
import { Agent } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { cycle, daemons, dockerCommand, measureBoth } from "./daemons.mjs";
import { sideBySide } from "./table.mjs";
import { median, now, stopLoopsOnCtrlC, timedRuns, wasInterrupted } from "./timing.mjs";

const { values } = parseArgs({ options: { runs: { type: "string", default: "10" }, only: { type: "string" } } });
const RUNS = Math.max(1, Math.min(Number(values.runs) || 10, 200));
const PHASE_LIMIT_MS = 180_000; // each timed loop stops here, whatever its count
const work = mkdtempSync(join(tmpdir(), "bench-network-"));
stopLoopsOnCtrlC();

/** `RUNS` pairs of a run with the bridge and one without, alternating which goes first; their medians. */
async function pairs(withBridge, withoutNetwork) {
  const bridge = [];
  const none = [];
  await timedRuns(RUNS, PHASE_LIMIT_MS, async (i) => {
    const order = [[withBridge, bridge], [withoutNetwork, none]];
    for (const [run, times] of i % 2 ? order.reverse() : order) {
      const s = now();
      await run();
      times.push(now() - s);
    }
  });
  return { bridge: median(bridge), none: median(none), n: Math.min(bridge.length, none.length) };
}

async function cliRuns(daemon) {
  const docker = dockerCommand(daemon, join(work, "docker-config"));
  const subnet = `${daemons[daemon.name].bip.split(".").slice(0, 3).join(".")}.`; // a /24
  const eth0 = await docker(["run", "--rm", "busybox", "ip", "-o", "-4", "addr", "show", "eth0"]);
  if (!eth0.includes(` ${subnet}`)) throw new Error(`a container on the default bridge has no address in ${daemons[daemon.name].bip}: ${eth0.trim() || "no eth0"}`);
  await docker(["run", "--rm", "--network", "none", "busybox", "true"]); // warm-up of that kind too
  return pairs(() => docker(["run", "--rm", "busybox", "true"]), () => docker(["run", "--rm", "--network", "none", "busybox", "true"]));
}

async function apiCycles(daemon) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    return await pairs(() => cycle(daemon.sock, agent, "default"), () => cycle(daemon.sock, agent, "none"));
  } finally {
    agent.destroy();
  }
}

let results;
try {
  results = await measureBoth(work, values.only, { bridge: true, warmUp: "default" }, async (daemon, part) => {
    await part("cli", () => cliRuns(daemon));
    await part("api", () => apiCycles(daemon));
  });
} finally {
  rmSync(work, { recursive: true, force: true });
}

const table = sideBySide(results, 46);
console.log(`\n${RUNS} runs of each kind, alternated; medians`);
table.header();
for (const [key, bridge, none] of [
  ["cli", "docker run --rm busybox true (default bridge)", "docker run --rm --network none busybox true"],
  ["api", "create+start+wait+rm, NetworkMode default", "create+start+wait+rm, NetworkMode none"],
]) {
  table.row(bridge, (r) => r[key], (o) => o.bridge, "ms");
  table.row(none, (r) => r[key], (o) => o.none, "ms");
  table.row("  what the bridge adds", (r) => r[key], (o) => o.bridge - o.none, "ms");
  table.row("  bridge / none", (r) => r[key], (o) => o.bridge / o.none, "factor", { ratio: false });
}
console.log(`(the bridges: engined's on ${daemons.engined.bip}, Docker's on ${daemons.dockerd.bip}, each in the daemon's own network namespace)`);
table.printNotes();
if (wasInterrupted()) process.exitCode = 130;
