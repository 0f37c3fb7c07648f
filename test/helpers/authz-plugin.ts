/**
 * Starts plugin processes for the tests (the authorization recorder fixture, the example
 * policy server, the example volume, network and IPAM plugins) and ends them by pid. Sockets and spec files go where engined looks for
 * plugins by name (`/run/engine/plugins`, `/etc/engine/plugins`), under names no one else
 * uses, and are removed again.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { ROOT } from "./engined.js";

export const SOCKET_DIR = "/run/engine/plugins";
export const SPEC_DIR = "/etc/engine/plugins";
const NODE = process.execPath;

export interface PluginProcess {
  proc: ChildProcess;
  /** What it printed after `listening `: a socket path or a port. */
  listening: string;
  output(): string;
  /** SIGTERM (a clean stop removes its socket) or SIGKILL (leaves it behind, like a crash). */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export interface RecordedCall {
  plugin: string;
  call: "Activate" | "AuthZReq" | "AuthZRes";
  accept?: string;
  body: Record<string, any>;
}

const running = new Set<PluginProcess>();
const files = new Set<string>();

/** A plugin name that is nobody else's: `t<hex>`. */
export function uniqueName(prefix = "t"): string {
  return `${prefix}${randomBytes(4).toString("hex")}`;
}

/** Marks a file (a socket, a spec file) to remove after the suite. */
export function removeLater(file: string): string {
  files.add(file);
  return file;
}

export function startRecorder(opts: { name: string; record: string; socket?: string; rules?: object }): Promise<PluginProcess> {
  const where = opts.socket ? ["--socket", opts.socket] : ["--port", "0"];
  if (opts.socket) removeLater(opts.socket);
  return startPluginProcess([join(ROOT, "dist/test/fixtures/authz-recorder.js"), "--name", opts.name, "--record", opts.record, ...where, "--rules", JSON.stringify(opts.rules ?? {})]);
}

export function startPolicyServer(args: string[]): Promise<PluginProcess> {
  const socket = args.indexOf("--socket");
  if (socket >= 0) removeLater(args[socket + 1]);
  return startPluginProcess([join(ROOT, "host/authz-remote/examples/policy/server.mjs"), ...args]);
}

/** The example volume plugin (host/remote-plugins/examples/dir-volumes), its socket removed after the suite. */
export function startDirVolumes(opts: { socket: string; root: string; record?: string; scope?: string }): Promise<PluginProcess> {
  removeLater(opts.socket);
  const extra = [...(opts.record ? ["--record", opts.record] : []), ...(opts.scope ? ["--scope", opts.scope] : [])];
  return startPluginProcess([join(ROOT, "host/remote-plugins/examples/dir-volumes/server.mjs"), "--socket", opts.socket, "--root", opts.root, ...extra]);
}

/** The example network plugin (host/remote-plugins/examples/veth-bridge), in the network namespace at `netns` (its bridges and veths there). */
export function startVethBridge(opts: { socket: string; netns: string; record?: string }): Promise<PluginProcess> {
  removeLater(opts.socket);
  const extra = opts.record ? ["--record", opts.record] : [];
  return startPluginProcess([join(ROOT, "host/remote-plugins/examples/veth-bridge/server.mjs"), "--socket", opts.socket, ...extra], opts.netns);
}

/** The example IPAM plugin (host/remote-plugins/examples/pool-ipam), its socket removed after the suite; `args`: its other flags (`--size 28`). */
export function startPoolIpam(opts: { socket: string; record?: string; args?: string[] }): Promise<PluginProcess> {
  removeLater(opts.socket);
  const extra = [...(opts.record ? ["--record", opts.record] : []), ...(opts.args ?? [])];
  return startPluginProcess([join(ROOT, "host/remote-plugins/examples/pool-ipam/server.mjs"), "--socket", opts.socket, ...extra]);
}

/** `netns`: a namespace file to run the plugin in (nsenter execs it: the pid stays the plugin's). */
function startPluginProcess(argv: string[], netns?: string): Promise<PluginProcess> {
  const proc = netns ? spawn("nsenter", [`--net=${netns}`, "--", NODE, ...argv], { stdio: ["ignore", "pipe", "pipe"] }) : spawn(NODE, argv, { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  proc.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  proc.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const plugin: PluginProcess = {
    proc,
    listening: "",
    output: () => out,
    stop: async (signal = "SIGTERM") => {
      running.delete(plugin);
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((r) => proc.once("exit", r));
      proc.kill(signal);
      await exited;
    },
  };
  running.add(plugin);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`plugin did not start:\n${out}`)), 10_000);
    const check = () => {
      const m = /listening (\S+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      proc.stdout!.off("data", check);
      plugin.listening = m[1];
      resolve(plugin);
    };
    proc.stdout!.on("data", check);
    proc.once("exit", () => reject(new Error(`plugin exited before listening:\n${out}`)));
  });
}

export function recordedCalls(record: string): RecordedCall[] {
  if (!existsSync(record)) return [];
  return readFileSync(record, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line) as RecordedCall);
}

/** Ends every plugin process still running and removes the sockets and spec files (after hook). */
export async function cleanUpPlugins(): Promise<void> {
  await Promise.all([...running].map((p) => p.stop("SIGKILL")));
  for (const file of files) rmSync(file, { force: true });
  files.clear();
}
