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
import { runnableFile } from "../bundle-entries.js";
import { SupervisorClient } from "./client.js";

export interface SupervisorHandle {
  client: SupervisorClient;
  socket: string;
  /** The supervisor's pid, as it answered. */
  pid: number;
  /** Whether it is engined's own (under the exec root) rather than one started by hand. */
  own: boolean;
}

// (in the bundled daemon, the bundle's supervisor: host/bundle-entries.ts)
const MAIN = runnableFile(join(dirname(fileURLToPath(import.meta.url)), "main.js"));

async function answers(client: SupervisorClient, namespace: string, address: string): Promise<number | undefined> {
  let pong;
  try {
    pong = await client.ping();
  } catch {
    return undefined;
  }
  // One supervisor serves one namespace: containers of two daemons never mix.
  if (pong.namespace !== namespace) {
    await client.close();
    throw new Error(`the supervisor at ${address} serves namespace "${pong.namespace}", not "${namespace}" (--supervisor-namespace)`);
  }
  return pong.pid;
}

/**
 * The socket of the supervisor engined uses: `--supervisor`'s, else its own under the exec root
 * (`home`, by default `<exec-root>/supervisor`; the CRI's containers have one of their own).
 */
export function supervisorSocket(opts: { address?: string; execRoot: string; home?: string }): string {
  return opts.address ? opts.address.replace(/^unix:\/\//, "") : join(opts.home ?? join(opts.execRoot, "supervisor"), "supervisor.sock");
}

/** Whether that supervisor answers a ping within `timeoutMs`, for the namespace; starts nothing. */
export async function supervisorAnswers(opts: { address?: string; execRoot: string; namespace: string }, timeoutMs: number): Promise<boolean> {
  const client = new SupervisorClient(supervisorSocket(opts));
  try {
    return (await client.ping(AbortSignal.timeout(timeoutMs))).namespace === opts.namespace;
  } catch {
    return false;
  } finally {
    await client.close().catch(() => {});
  }
}

/** `conmon`: what a supervisor started here runs (the daemon's `conmon` option); one found running keeps its own. */
export async function ensureSupervisor(opts: { address?: string; execRoot: string; home?: string; namespace: string; conmon?: string; timeoutMs?: number }): Promise<SupervisorHandle> {
  if (opts.address) {
    const socket = supervisorSocket(opts);
    const client = new SupervisorClient(socket);
    const pid = await answers(client, opts.namespace, opts.address);
    if (pid === undefined) {
      await client.close();
      throw new Error(`the supervisor at ${opts.address} does not answer (start it first, see host/supervisor/README.md)`);
    }
    return { client, socket, pid, own: false };
  }
  const socket = supervisorSocket(opts);
  const root = dirname(socket);
  const client = new SupervisorClient(socket);
  const running = await answers(client, opts.namespace, socket);
  if (running !== undefined) return { client, socket, pid: running, own: true };
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const logFd = openSync(join(root, "supervisor.log"), "a");
  const conmon = opts.conmon ? ["--conmon", opts.conmon] : [];
  const child = spawn(process.execPath, [MAIN, "--socket", socket, "--root", root, "--namespace", opts.namespace, ...conmon], {
    detached: true,
    stdio: ["ignore", logFd, logFd],
  });
  closeSync(logFd);
  child.unref();
  const until = Date.now() + (opts.timeoutMs ?? 10_000);
  while (Date.now() < until) {
    const pid = await answers(client, opts.namespace, socket);
    if (pid !== undefined) return { client, socket, pid, own: true };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  await client.close();
  throw new Error(`the supervisor did not start; see ${join(root, "supervisor.log")}`);
}
