/**
 * Restart policies (`--restart no|always|unless-stopped|on-failure[:N]`) as Docker has them:
 * which are valid at create and update, whether an exit calls for a restart, and the back-off
 * between restarts (100 ms, doubling, at most a minute, back to the start after a run of 10 s).
 */
import { errors } from "../errors.js";
import type { HostConfig, RestartPolicy } from "./container-config.js";

const FIRST_DELAY_MS = 100;
const MAX_DELAY_MS = 60_000;
/** A run at least this long resets the back-off. */
const RESET_AFTER_MS = 10_000;

const NAMES = ["", "no", "always", "unless-stopped", "on-failure"];

export function isNoPolicy(policy: RestartPolicy | undefined): boolean {
  return !policy || policy.Name === "" || policy.Name === "no";
}

/** Refuses a policy Docker refuses (400); an empty name is "no". */
export function checkRestartPolicy(policy: RestartPolicy | undefined): void {
  if (!policy) return;
  const name = policy.Name ?? "";
  const max = policy.MaximumRetryCount ?? 0;
  if (!NAMES.includes(name)) throw errors.containerInvalidRestartPolicy(`unknown policy '${name}'; use one of 'no', 'always', 'on-failure', or 'unless-stopped'`);
  // An empty name with a count is let through, as Docker does for old clients.
  if (name === "on-failure") {
    if (max < 0) throw errors.containerInvalidRestartPolicy("maximum retry count cannot be negative");
  } else if (name !== "" && max !== 0) {
    throw errors.containerInvalidRestartPolicy(`maximum retry count can only be used with 'on-failure'${max < 0 ? " and cannot be negative" : ""}`);
  }
}

/** A create's policy: valid, and not with AutoRemove. */
export function checkCreatePolicy(hc: HostConfig | undefined): void {
  checkRestartPolicy(hc?.RestartPolicy);
  if (hc?.AutoRemove && !isNoPolicy(hc.RestartPolicy)) throw errors.containerAutoRemoveRestart();
}

/**
 * Whether the policy restarts a container that exited with `exitCode`: `always` whatever
 * happened, `unless-stopped` unless a user stopped it, `on-failure` on a non-zero code while
 * fewer than MaximumRetryCount restarts were made (0: no limit).
 */
export function policyRestarts(policy: RestartPolicy | undefined, exitCode: number, manuallyStopped: boolean, restartCount: number): boolean {
  if (isNoPolicy(policy)) return false;
  switch (policy!.Name) {
    case "always":
      return true;
    case "unless-stopped":
      return !manuallyStopped;
    case "on-failure": {
      const max = policy!.MaximumRetryCount ?? 0;
      return exitCode !== 0 && (max === 0 || restartCount < max);
    }
    default:
      return false;
  }
}

/** The delay before the next restart, from the one before (0 when none) and how long the run lasted. */
export function nextDelay(previousMs: number, ranMs: number): number {
  const before = ranMs >= RESET_AFTER_MS ? 0 : previousMs;
  return before === 0 ? FIRST_DELAY_MS : Math.min(before * 2, MAX_DELAY_MS);
}
