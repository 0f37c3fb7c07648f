/**
 * Runs the real Docker CLI against a daemon, with a configuration folder of its own so that
 * nothing of the machine's `~/.docker` (contexts, credentials) leaks in or is changed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand, type RunResult } from "./engined.js";

export async function docker(host: string, args: string[], env: NodeJS.ProcessEnv = {}, opts: { input?: string; timeoutMs?: number } = {}): Promise<RunResult> {
  const config = mkdtempSync(join(tmpdir(), "engine-docker-config-"));
  try {
    return await runCommand("docker", ["-H", host, ...args], {
      env: { DOCKER_HOST: undefined, DOCKER_CONTEXT: undefined, DOCKER_TLS_VERIFY: undefined, DOCKER_CERT_PATH: undefined, DOCKER_CONFIG: config, ...env },
      timeoutMs: opts.timeoutMs ?? 30_000,
      ...(opts.input !== undefined ? { input: opts.input } : {}),
    });
  } finally {
    rmSync(config, { recursive: true, force: true });
  }
}

/**
 * `docker info` with these arguments. The CLI exits 0 even when the daemon refused `/info`
 * (only stderr says so): a daemon just started on a loaded machine may answer 503 "overloaded"
 * for a moment, so that answer is asked again (bounded: 40 tries, 250 ms apart).
 */
export async function dockerInfo(host: string, args: string[] = []): Promise<RunResult> {
  let r = await docker(host, ["info", ...args]);
  for (let i = 0; i < 40 && r.stderr.includes("the daemon is overloaded"); i++) {
    await new Promise((res) => setTimeout(res, 250));
    r = await docker(host, ["info", ...args]);
  }
  return r;
}
