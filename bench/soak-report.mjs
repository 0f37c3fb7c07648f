// The soak's report: a row per API call (count, p50, p99, max, errors), engined's and its
// supervisor's RSS and open descriptors at the start and the end, every error kept (with what
// else was in flight), and every leftover.
import { leftoverLines } from "./soak-run.mjs";

const ms = (x) => (x < 10 ? x.toFixed(1) : Math.round(x).toString()).padStart(8);

export function printReport(result, print = console.log) {
  const total = result.calls.reduce((n, c) => n + c.count, 0);
  print(`engined soak: ${result.clients} clients, ${result.seconds.toFixed(0)} s, seed ${result.seed}: ${total} calls (${(total / result.seconds).toFixed(1)}/s), ${result.errors} errors`);
  print("");
  print(`${"call".padEnd(34)} ${"count".padStart(7)} ${"p50 ms".padStart(8)} ${"p99 ms".padStart(8)} ${"max ms".padStart(8)} ${"errors".padStart(7)}`);
  for (const c of result.calls) print(`${c.name.padEnd(34)} ${String(c.count).padStart(7)} ${ms(c.p50)} ${ms(c.p99)} ${ms(c.max)} ${String(c.errors).padStart(7)}`);
  print("");
  print(`${"process".padEnd(12)} ${"RSS start".padStart(10)} ${"RSS end".padStart(10)} ${"fds start".padStart(10)} ${"fds end".padStart(10)}`);
  for (const [name, f] of Object.entries(result.figures)) {
    const mib = (x) => (x ? `${x.rssMiB.toFixed(1)} MiB` : "gone").padStart(10);
    const fds = (x) => (x ? String(x.fds) : "gone").padStart(10);
    print(`${name.padEnd(12)} ${mib(f.start)} ${mib(f.end)} ${fds(f.start)} ${fds(f.end)}`);
  }
  for (const [name, f] of Object.entries(result.figures)) {
    if (!f.start || !f.end || f.start.fds === f.end.fds) continue;
    const kinds = [...new Set([...Object.keys(f.start.kinds), ...Object.keys(f.end.kinds)])].sort();
    const changed = kinds.filter((k) => (f.start.kinds[k] ?? 0) !== (f.end.kinds[k] ?? 0)).map((k) => `${k} ${f.start.kinds[k] ?? 0} -> ${f.end.kinds[k] ?? 0}`);
    print(`  ${name}'s descriptors that changed: ${changed.join(", ")}`);
  }
  if (result.timeline?.length) {
    print("");
    print(`${"minute".padStart(6)} ${"calls".padStart(7)} ${"engined RSS".padStart(12)} ${"fds".padStart(5)} ${"supervisor RSS".padStart(15)} ${"fds".padStart(5)}`);
    const mib = (x, w) => (x ? `${x.rssMiB.toFixed(1)} MiB` : "gone").padStart(w);
    for (const p of result.timeline) print(`${String(Math.round(p.at / 60)).padStart(6)} ${String(p.calls).padStart(7)} ${mib(p.engined, 12)} ${String(p.engined?.fds ?? "-").padStart(5)} ${mib(p.supervisor, 15)} ${String(p.supervisor?.fds ?? "-").padStart(5)}`);
  }
  if (result.errors) {
    print("");
    print(`errors (${result.errors}${result.errorSamples.length < result.errors ? `, the first ${result.errorSamples.length}` : ""}):`);
    for (const e of result.errorSamples) {
      print(`  ${e.at.toFixed(1)} s, client ${e.client}, ${e.call} (${Math.round(e.ms)} ms): ${e.message}`);
      if (e.inFlightAtStart) print(`    in flight when it was sent: ${e.inFlightAtStart}`);
      if (e.inFlightAtEnd) print(`    in flight when it ended: ${e.inFlightAtEnd}`);
    }
  }
  const left = leftoverLines(result);
  print("");
  print(left.length ? `leftovers (${left.length}):` : "leftovers: none");
  for (const l of left) print(`  ${l}`);
}
