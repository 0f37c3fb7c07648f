/**
 * The pid file: written at start, removed at stop. A pid file that names a live process
 * means another daemon owns this configuration, and starting anyway would share its roots.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { errors } from "../core/errors.js";
import { processAlive } from "./process-alive.js";

export function claimPidfile(path: string): () => void {
  const existing = readPid(path);
  if (existing !== undefined && existing !== process.pid && processAlive(existing)) {
    throw errors.daemonAlreadyRunning(path, existing);
  }
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${process.pid}`, { mode: 0o644 });
  return () => {
    if (readPid(path) === process.pid) rmSync(path, { force: true });
  };
}

function readPid(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, "utf8").trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
