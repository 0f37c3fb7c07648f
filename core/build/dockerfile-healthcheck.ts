/**
 * HEALTHCHECK's arguments, as Docker 28's classic builder checks them (the Dockerfile parser of
 * BuildKit 0.20 it uses): `NONE` (no arguments, and any flags ignored), or `CMD` with a command
 * in exec or shell form and the flags --interval, --timeout, --start-period, --start-interval
 * (Go durations: 0, or at least 1ms) and --retries (0 or more). Any other type is refused.
 * (Docker 20.10 knew no --start-interval, took no 0 duration and wanted at least 1 retry.)
 */
import { goQuote, parseGoDuration, parseGoInt32 } from "./go-text.js";
import { parseFlags } from "./dockerfile-flags.js";
import { InstructionProblem } from "./dockerfile-problems.js";
import type { ParsedLine } from "./dockerfile-line-parsers.js";
import type { HealthcheckSpec } from "./dockerfile-types.js";

const FLAGS = { interval: "string", timeout: "string", "start-period": "string", "start-interval": "string", retries: "string" } as const;

/** A duration flag: 0 when not given or 0; otherwise at least 1ms. */
function interval(name: string, value: string | undefined): number {
  if (value === undefined || value === "") return 0;
  let nanos: number;
  try {
    nanos = parseGoDuration(value);
  } catch (err) {
    throw new InstructionProblem((err as Error).message);
  }
  if (nanos !== 0 && nanos < 1_000_000) throw new InstructionProblem(`Interval "${name}" cannot be less than 1ms`);
  return nanos;
}

export function parseHealthcheck(line: ParsedLine): { healthcheck: HealthcheckSpec; flags: Record<string, string> } {
  if (line.args.length === 0) throw new InstructionProblem("HEALTHCHECK requires at least one argument");
  const type = line.args[0]!.toUpperCase();
  const command = line.args.slice(1);
  if (type === "NONE") {
    if (command.length !== 0) throw new InstructionProblem("HEALTHCHECK NONE takes no arguments");
    return { healthcheck: { test: ["NONE"], interval: 0, timeout: 0, startPeriod: 0, startInterval: 0, retries: 0 }, flags: {} };
  }
  const flags = parseFlags(line.flags, FLAGS).values;
  if (type !== "CMD") throw new InstructionProblem(`Unknown type ${goQuote(type)} in HEALTHCHECK (try CMD)`);
  // The shell form is one string (as RUN's); the exec form keeps its words.
  const argv = line.json ? command : command.length === 0 ? [] : [command.join(" ")];
  if (argv.length === 0) throw new InstructionProblem("Missing command after HEALTHCHECK CMD");
  const healthcheck: HealthcheckSpec = {
    test: [line.json ? "CMD" : "CMD-SHELL", ...argv],
    interval: interval("interval", flags.interval),
    timeout: interval("timeout", flags.timeout),
    startPeriod: interval("start-period", flags["start-period"]),
    startInterval: interval("start-interval", flags["start-interval"]),
    retries: 0,
  };
  if (flags.retries !== undefined && flags.retries !== "") {
    let retries: number;
    try {
      retries = parseGoInt32(flags.retries);
    } catch (err) {
      throw new InstructionProblem((err as Error).message);
    }
    if (retries < 0) throw new InstructionProblem(`--retries cannot be negative (${retries})`);
    healthcheck.retries = retries;
  }
  return { healthcheck, flags };
}
