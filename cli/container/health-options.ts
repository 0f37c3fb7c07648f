/**
 * The health-check flags of `run` and `create` as the Docker CLI reads them: `--health-cmd`
 * (run by a shell), the four durations and `--health-retries`, or `--no-healthcheck` (which
 * goes with none of them). Only what is set is sent (Go's `omitempty`), in nanoseconds.
 */
import { parseGoDuration } from "../../core/build/go-text.js";

export interface HealthFlags {
  cmd: string;
  interval: string;
  timeout: string;
  startPeriod: string;
  startInterval: string;
  retries: number;
  none: boolean;
}

export interface HealthConfig {
  Test?: string[];
  Interval?: number;
  Timeout?: number;
  StartPeriod?: number;
  StartInterval?: number;
  Retries?: number;
}

/** The Healthcheck to send, or undefined when no flag sets one. */
export function healthConfig(f: HealthFlags): HealthConfig | undefined {
  const ns = (v: string) => (v === "" ? 0 : parseGoDuration(v));
  const d = { Interval: ns(f.interval), Timeout: ns(f.timeout), StartPeriod: ns(f.startPeriod), StartInterval: ns(f.startInterval) };
  const any = f.cmd !== "" || f.retries !== 0 || Object.values(d).some((v) => v !== 0);
  if (f.none) {
    if (any) throw new Error("--no-healthcheck conflicts with --health-* options");
    return { Test: ["NONE"] };
  }
  if (!any) return undefined;
  if (d.Interval < 0) throw new Error("--health-interval cannot be negative");
  if (d.Timeout < 0) throw new Error("--health-timeout cannot be negative");
  if (f.retries < 0) throw new Error("--health-retries cannot be negative");
  if (d.StartPeriod < 0) throw new Error("--health-start-period cannot be negative");
  if (d.StartInterval < 0) throw new Error("--health-start-interval cannot be negative");
  const out: HealthConfig = f.cmd !== "" ? { Test: ["CMD-SHELL", f.cmd] } : {};
  for (const [k, v] of Object.entries(d)) if (v !== 0) out[k as keyof typeof d] = v;
  if (f.retries !== 0) out.Retries = f.retries;
  return out;
}
