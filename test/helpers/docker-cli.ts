/**
 * Runs the real Docker CLI against a daemon, with a configuration folder of its own so that
 * nothing of the machine's `~/.docker` (contexts, credentials) leaks in or is changed.
 */
import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand, type RunResult } from "./engined.js";

export async function docker(host: string, args: string[], env: NodeJS.ProcessEnv = {}, opts: { input?: string | Buffer; timeoutMs?: number } = {}): Promise<RunResult> {
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

/** `docker info` with these arguments. */
export function dockerInfo(host: string, args: string[] = []): Promise<RunResult> {
  return docker(host, ["info", ...args]);
}

/**
 * The Docker CLI against the daemon `host()` names (read at each call: tests start it in a
 * hook): `run` as it is, `ok` for a command that must succeed (its stdout), `fails` for one that
 * must not (its stderr); both fail the test naming the command.
 */
export function dockerChecks(host: () => string) {
  const run = (...a: string[]) => docker(host(), a);
  const ok = async (...a: string[]) => {
    const r = await run(...a);
    expect(r.code, `docker ${a.join(" ")}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  const fails = async (...a: string[]) => {
    const r = await run(...a);
    expect(r.code, `docker ${a.join(" ")} should fail: ${r.stdout}`).to.not.equal(0);
    return r.stderr;
  };
  return { run, ok, fails };
}
