/**
 * Finds the supervisor engined talks to. With `--supervisor ADDR` it is the one an operator
 * started by hand (it must answer). Otherwise it is the one at `<exec-root>/supervisor/`: a
 * supervisor still running from before (engined restarted, its containers went on) is used
 * again; else a new one is started, detached in a session of its own, so that it outlives
 * engined.
 */
import { spawn } from "node:child_process";
import { mkdirSync, openSync, closeSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { SupervisorClient } from "./client.js";

export interface SupervisorHandle {
  client: SupervisorClient;
  socket: string;
  /** The pid of a supervisor this call started; undefined when one was running already. */
  startedPid?: number;
}

const MAIN = join(dirname(fileURLToPath(import.meta.url)), "main.js");

async function answers(client: SupervisorClient): Promise<boolean> {
  try {
    await client.ping();
    return true;
  } catch {
    return false;
  }
}

export async function ensureSupervisor(opts: { address?: string; execRoot: string; namespace: string; timeoutMs?: number }): Promise<SupervisorHandle> {
  if (opts.address) {
    const socket = opts.address.replace(/^unix:\/\//, "");
    const client = new SupervisorClient(socket);
    if (!(await answers(client))) {
      await client.close();
      throw new Error(`the supervisor at ${opts.address} does not answer (start it first, see README)`);
    }
    return { client, socket };
  }
  const root = join(opts.execRoot, "supervisor");
  const socket = join(root, "supervisor.sock");
  const client = new SupervisorClient(socket);
  if (await answers(client)) return { client, socket };
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const logFd = openSync(join(root, "supervisor.log"), "a");
  const child = spawn(process.execPath, [MAIN, "--socket", socket, "--root", root, "--namespace", opts.namespace], {
    detached: true,
    stdio: ["ignore", logFd, logFd],
  });
  closeSync(logFd);
  child.unref();
  const until = Date.now() + (opts.timeoutMs ?? 10_000);
  while (Date.now() < until) {
    if (await answers(client)) return { client, socket, startedPid: child.pid };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  await client.close();
  throw new Error(`the supervisor did not start; see ${join(root, "supervisor.log")}`);
}
