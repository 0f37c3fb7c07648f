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
