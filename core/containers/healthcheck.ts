/**
 * Health checks, Docker's rules, with no timers and no processes: what a container's check is
 * (its own `Config.Healthcheck` over its image's), whether it is valid, what command a probe
 * runs, what a probe's result does to `State.Health`, and when the next probe comes. The
 * monitor that runs probes on a schedule is host/containers/health/.
 *
 * Vocabulary (Docker's): a check is `Test` (`["NONE"]`, `["CMD", arg...]`, `["CMD-SHELL",
 * command]`) with durations in nanoseconds (0: the default) and `Retries`. A probe is one run
 * of `Test` in the container (an exec); exit status 0 is healthy, anything else (a timeout
 * too) a failure. `State.Health` is `Status` (`starting` until the first success, then
 * `healthy`, or `unhealthy` after `Retries` failures in a row), `FailingStreak` and the `Log`
 * of the last 5 results, each with its output capped at 4096 bytes (`...` marks a cut).
 * Failures inside `StartPeriod` after the start do not count while the status is `starting`.
 */
import { parseGoDuration } from "../build/go-text.js";

export interface HealthConfig {
  Test?: string[] | null;
  /** Nanoseconds between two probes (from the end of one to the start of the next); 0: 30 s. */
  Interval?: number;
  /** Nanoseconds a probe may run; 0: 30 s. */
  Timeout?: number;
  /** Nanoseconds after the start during which failures do not count; 0: none. */
  StartPeriod?: number;
  /** Nanoseconds between probes during the start period while still starting; 0: 5 s. */
  StartInterval?: number;
  /** Failures in a row that make the container unhealthy; 0: 3. */
  Retries?: number;
}

/**
 * A check as a create request gives it: any field may be null (the Python SDK, and so
 * docker-compose, sends `"StartPeriod": null` for what the project leaves out). Docker's JSON
 * decoding leaves the zero value for a null, which its `omitempty` then leaves out: the merge
 * drops them.
 */
export type HealthConfigRequest = { [K in keyof HealthConfig]?: HealthConfig[K] | null };

export type HealthStatus = "starting" | "healthy" | "unhealthy";

export interface HealthResult {
  /** RFC 3339 times, as Docker writes them. */
  Start: string;
  End: string;
  ExitCode: number;
  Output: string;
}

export interface HealthState {
  Status: HealthStatus;
  FailingStreak: number;
  Log: HealthResult[];
}

const SECOND_NS = 1e9;
export const HEALTH_DEFAULTS = { interval: 30 * SECOND_NS, timeout: 30 * SECOND_NS, startPeriod: 0, startInterval: 5 * SECOND_NS, retries: 3 };
/** Results kept in `State.Health.Log`. */
const MAX_HEALTH_LOG = 5;
/** Bytes of a probe's output kept. */
const MAX_HEALTH_OUTPUT = 4096;
/** Docker's containertypes.MinimumDuration: the shortest duration a check may give. */
const MINIMUM_NS = 1e6;

/**
 * A container's check: its own over its image's, field by field (an empty Test or a zero
 * duration takes the image's), as Docker merges them at create.
 */
export function mergeHealthcheck(request: HealthConfigRequest | null | undefined, image: HealthConfig | null | undefined): HealthConfig | undefined {
  const own = request ? withoutNulls(request) : undefined;
  if (!own) return image ? { ...image } : undefined;
  if (!image) return own;
  const merged: HealthConfig = { ...own };
  if (!merged.Test || merged.Test.length === 0) merged.Test = image.Test;
  for (const key of ["Interval", "Timeout", "StartPeriod", "StartInterval", "Retries"] as const) {
    if (!merged[key] && image[key]) merged[key] = image[key];
  }
  return merged;
}

function withoutNulls(request: HealthConfigRequest): HealthConfig {
  return Object.fromEntries(Object.entries(request).filter(([, value]) => value !== null)) as HealthConfig;
}

/** Docker's checks at create; the message names the field, or undefined when the check is fine. */
export function healthcheckProblem(hc: HealthConfig | null | undefined): string | undefined {
  if (!hc) return undefined;
  for (const key of ["Interval", "Timeout", "StartPeriod", "StartInterval"] as const) {
    const value = hc[key] ?? 0;
    if (value !== 0 && value < MINIMUM_NS) return `${key} in Healthcheck cannot be less than 1ms`;
  }
  if ((hc.Retries ?? 0) < 0) return "Retries in Healthcheck cannot be negative";
  return undefined;
}

/**
 * The command a probe runs, or undefined when there is no check to run (none, `NONE`, or a
 * kind Docker does not know, which it skips with a warning).
 */
export function probeCommand(hc: HealthConfig | null | undefined, shell: readonly string[] = ["/bin/sh", "-c"]): string[] | undefined {
  const test = hc?.Test;
  if (!test || test.length === 0) return undefined;
  if (test[0] === "CMD") return test.length > 1 ? test.slice(1) : undefined;
  if (test[0] === "CMD-SHELL") return test.length > 1 ? [...shell, ...test.slice(1)] : undefined;
  return undefined;
}

/** The state a (re)started container's check begins in. */
export function startingHealth(previous?: HealthState): HealthState {
  return { Status: "starting", FailingStreak: 0, Log: previous?.Log ?? [] };
}

/**
 * `State.Health` after a probe's result; `changed` when its Status moved (a `health_status`
 * event is due then).
 */
export function applyHealthResult(
  state: HealthState,
  result: HealthResult,
  opts: { hc: HealthConfig; startedAt: string },
): { state: HealthState; changed: boolean } {
  const log = [...state.Log, result].slice(-MAX_HEALTH_LOG);
  let { Status, FailingStreak } = state;
  if (result.ExitCode === 0) {
    FailingStreak = 0;
    Status = "healthy";
  } else {
    const startPeriodMs = (opts.hc.StartPeriod || HEALTH_DEFAULTS.startPeriod) / 1e6;
    const inStartPeriod = Status === "starting" && Date.parse(result.Start) - Date.parse(opts.startedAt) < startPeriodMs;
    if (!inStartPeriod) {
      FailingStreak++;
      if (FailingStreak >= (opts.hc.Retries || HEALTH_DEFAULTS.retries)) Status = "unhealthy";
    }
  }
  return { state: { Status, FailingStreak, Log: log }, changed: Status !== state.Status };
}

/**
 * Milliseconds until the next probe, `elapsedMs` after the container started: the interval;
 * within the start period, the start interval while still starting (Docker's monitor decides
 * each wait so, when the previous probe ends: a start period shorter than the interval gets
 * its probes at the start interval, not one at the period's end).
 */
export function nextProbeDelay(hc: HealthConfig, elapsedMs: number, status: HealthStatus): number {
  const interval = (hc.Interval || HEALTH_DEFAULTS.interval) / 1e6;
  const startPeriod = (hc.StartPeriod || HEALTH_DEFAULTS.startPeriod) / 1e6;
  if (elapsedMs >= startPeriod) return interval;
  return status === "starting" ? (hc.StartInterval || HEALTH_DEFAULTS.startInterval) / 1e6 : interval;
}

/** A probe's output, up to MAX_HEALTH_OUTPUT bytes; `...` is added when more came. */
export class ProbeOutput {
  private readonly chunks: Buffer[] = [];
  private length = 0;
  private cut = false;

  write(data: Buffer): void {
    const keep = Math.min(MAX_HEALTH_OUTPUT - this.length, data.length);
    if (keep > 0) {
      this.chunks.push(data.subarray(0, keep));
      this.length += keep;
    }
    if (keep < data.length) this.cut = true;
  }

  toString(): string {
    const text = Buffer.concat(this.chunks).toString("utf8");
    return this.cut ? `${text}...` : text;
  }
}

/** Go's time.ParseDuration, in nanoseconds (core/build/go-text.ts). */
export { parseGoDuration };

/**
 * The arguments of a `HEALTHCHECK` instruction (`docker commit --change`, `docker import
 * --change`, a Dockerfile): `NONE`, or options then `CMD` with a command in exec (JSON) or shell
 * form. Errors in Docker's builder's words.
 */
export function parseHealthcheckInstruction(args: string): HealthConfig {
  let rest = args.trim();
  const hc: HealthConfig = {};
  const flags: Record<string, string> = {};
  for (let m = /^--([a-z-]+)=(\S*)\s*/.exec(rest); m; m = /^--([a-z-]+)=(\S*)\s*/.exec(rest)) {
    flags[m[1]] = m[2];
    rest = rest.slice(m[0].length);
  }
  const [kind, ...words] = rest.split(/\s+/);
  const type = (kind ?? "").toUpperCase();
  if (type === "NONE") {
    if (words.length > 0 || Object.keys(flags).length > 0) throw new Error("HEALTHCHECK NONE takes no arguments");
    return { Test: ["NONE"] };
  }
  if (type !== "CMD") throw new Error(`Unknown type "${type}" in HEALTHCHECK (try CMD)`);
  const command = rest.slice(kind.length).trim();
  let exec: unknown;
  try {
    exec = command.startsWith("[") ? JSON.parse(command) : undefined;
  } catch {
    exec = undefined;
  }
  hc.Test = Array.isArray(exec) && exec.every((x) => typeof x === "string") ? ["CMD", ...exec] : ["CMD-SHELL", command];
  const durations: [string, keyof HealthConfig][] = [["interval", "Interval"], ["timeout", "Timeout"], ["start-period", "StartPeriod"], ["start-interval", "StartInterval"]];
  for (const [flag, key] of durations) {
    if (flags[flag] === undefined || flags[flag] === "") continue;
    const ns = parseGoDuration(flags[flag]);
    if (ns !== 0 && ns < MINIMUM_NS) throw new Error(`Interval "${flag}" cannot be less than 1ms`);
    if (ns !== 0) (hc as Record<string, unknown>)[key] = ns;
  }
  for (const flag of Object.keys(flags)) {
    if (!["interval", "timeout", "start-period", "start-interval", "retries"].includes(flag)) throw new Error(`Unknown flag: ${flag}`);
  }
  if (flags.retries !== undefined) {
    const retries = Number(flags.retries);
    if (!/^-?\d+$/.test(flags.retries)) throw new Error(`strconv.ParseInt: parsing "${flags.retries}": invalid syntax`);
    if (retries < 0) throw new Error(`--retries cannot be negative (${retries})`);
    if (retries > 0) hc.Retries = retries;
  }
  return hc;
}

/** A duration as Go prints it (`30s`, `1.5s`, `500ms`, `1m30s`), for Docker's timeout message. */
export function goDuration(ns: number): string {
  if (ns === 0) return "0s";
  if (ns < 1e3) return `${ns}ns`;
  if (ns < 1e6) return `${trim(ns / 1e3)}µs`;
  if (ns < 1e9) return `${trim(ns / 1e6)}ms`;
  const totalSeconds = ns / 1e9;
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds - hours * 3600) / 60);
  const seconds = totalSeconds - hours * 3600 - minutes * 60;
  return `${hours ? `${hours}h` : ""}${hours || minutes ? `${minutes}m` : ""}${trim(seconds)}s`;
}

function trim(n: number): string {
  return String(Number(n.toFixed(9)));
}
