/**
 * The soak's smoke variant (issue 27): bench/soak.mjs's own run (bench/soak-run.mjs, imported
 * from the source tree: the bench is plain JavaScript, not compiled) for 60 s with 16 clients
 * against a fresh engined in a network namespace of its own: containers created, started,
 * logged, exec'd into, inspected, listed, stopped and removed, pulls from a registry on loopback
 * in that namespace, volumes and networks made and removed. It holds that no call failed and
 * that nothing was left: containers, images, volumes and networks in the API; processes, mounts,
 * interfaces, iptables rules and files on the host. No time is asserted; the report (latencies,
 * the daemon's memory and descriptors) is printed for the log.
 */
import { expect } from "chai";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT } from "./helpers/engined.js";

const SECONDS = Number(process.env.ENGINE_SOAK_SECONDS ?? 60);
const CLIENTS = 16;
const SEED = Number(process.env.ENGINE_SOAK_SEED ?? 27);

interface SoakResult {
  errors: number;
  errorSamples: { at: number; client: number; call: string; message: string; inFlightAtStart: string }[];
  calls: { name: string; count: number; errors: number }[];
}
interface SoakModule {
  runSoak(opts: { seconds: number; clients: number; seed: number; log: (line: string) => void }): Promise<SoakResult>;
  leftoverLines(result: SoakResult): string[];
}

describe("soak smoke: 16 clients for 60 s", function () {
  // the push, the daemon's start, the run, each client's clean-up and the leftover checks
  this.timeout(SECONDS * 1000 + 420_000);

  it("makes and removes containers, execs, pulls, volumes and networks with no failed call and leaves nothing behind", async () => {
    const soak = (await import(pathToFileURL(join(ROOT, "bench/soak-run.mjs")).href)) as SoakModule;
    const { printReport } = (await import(pathToFileURL(join(ROOT, "bench/soak-report.mjs")).href)) as { printReport(r: SoakResult, print: (l: string) => void): void };
    const result = await soak.runSoak({ seconds: SECONDS, clients: CLIENTS, seed: SEED, log: (line) => console.log(`      ${line}`) });
    printReport(result, (line) => console.log(`      ${line}`));
    // every kind of call ran: a soak that never reached one proves nothing about it
    const names = result.calls.map((c) => c.name);
    for (const call of ["POST /containers/create", "POST /containers/{id}/start", "GET /containers/{id}/logs", "POST /exec/{id}/start", "GET /containers/{id}/json", "GET /containers/json", "POST /containers/{id}/stop", "DELETE /containers/{id}", "POST /images/create (pull)", "DELETE /images/{name}", "POST /volumes/create", "DELETE /volumes/{name}", "POST /networks/create", "DELETE /networks/{id}"]) {
      expect(names, `no ${call} in the run`).to.include(call);
    }
    const errors = result.errorSamples.map((e) => `${e.at.toFixed(1)} s client ${e.client} ${e.call}: ${e.message} (in flight: ${e.inFlightAtStart || "nothing else"})`);
    expect(result.errors, `failed calls (seed ${SEED}, ENGINE_SOAK_SEED):\n${errors.join("\n")}`).to.equal(0);
    expect(soak.leftoverLines(result), "leftovers").to.deep.equal([]);
  });
});
