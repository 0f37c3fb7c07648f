// Benchmark: the soak (issue 27). N clients (16) for a chosen time (10 minutes) against a fresh
// engined, mixing container create/start/logs/exec/inspect/list/stop/rm, pulls from a registry
// on loopback, and volume and network create/remove (bench/soak-run.mjs, bench/soak-client.mjs);
// prints per call the count, p50, p99 and max latency and errors (which must be 0), engined's and
// its supervisor's RSS and open descriptors at the start and the end, and what was left over.
// Exits 1 when there was an error or a leftover. Nothing about time is asserted.
//
//   node_modules/node/bin/node bench/soak.mjs [--seconds S] [--clients N] [--seed K] [--keep-logs DIR]
import { parseArgs } from "node:util";
import { leftoverLines, runSoak } from "./soak-run.mjs";
import { printReport } from "./soak-report.mjs";
import { stopLoopsOnCtrlC, wasInterrupted } from "./timing.mjs";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "600" },
    clients: { type: "string", default: "16" },
    seed: { type: "string", default: String(Date.now() % 100_000) },
    "keep-logs": { type: "string" },
  },
});
const seconds = Math.max(5, Math.min(Number(values.seconds) || 600, 24 * 3600));
const clients = Math.max(1, Math.min(Number(values.clients) || 16, 64));
stopLoopsOnCtrlC();
try {
  const result = await runSoak({ seconds, clients, seed: Number(values.seed) || 0, keepLogs: values["keep-logs"], log: (line) => console.error(line) });
  printReport(result);
  if (result.errors || leftoverLines(result).length) process.exitCode = 1;
  else if (wasInterrupted()) process.exitCode = 130;
} catch (err) {
  console.error(`failed: ${err.message}`);
  process.exitCode = 1;
}
