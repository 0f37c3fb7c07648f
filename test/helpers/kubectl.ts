/**
 * The real kubectl (client-go) against a CRI streaming server in a daemon's network namespace:
 * the API server stand-in of kube-api-stub.ts runs in that namespace, kubectl too (both under
 * `nsenter --net`), with a kubeconfig and a HOME of a temporary folder. `target(url)` says where
 * the next exec/attach/port-forward goes (the URL a CRI call answered).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { makeTempDir } from "./engined.js";

export interface KubectlResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface KubectlRun {
  /** stdin given at once and closed (undefined: none, closed at once). */
  input?: string;
  env?: Record<string, string>;
  /** Run under `script`, with a pseudo-terminal of `rows`x`cols` (for `-t`). */
  tty?: { rows: number; cols: number };
  timeoutMs?: number;
}

export interface KubeStub {
  port: number;
  target(url: string): void;
  kubectl(args: string[], run?: KubectlRun): Promise<KubectlResult>;
  /** A kubectl left running (port-forward), its output collected; stop() kills it. */
  spawnKubectl(args: string[], env?: Record<string, string>): { child: ChildProcess; output(): string };
  /** What the stub was asked (its log). */
  log(): string;
  stop(): Promise<void>;
}

const STUB = join(fileURLToPath(new URL(".", import.meta.url)), "kube-api-stub.js");

/** `ca`: the CA (PEM file) the stub trusts when it dials an https:// target, as a kubelet trusts the node's roots. */
export async function startKubeStub(netnsFile: string, ca?: string): Promise<KubeStub> {
  const dir = makeTempDir("engine-kubectl-");
  const targetFile = join(dir, "target");
  writeFileSync(targetFile, "http://127.0.0.1:1/none");
  const stub = spawn("nsenter", [`--net=${netnsFile}`, "--", process.execPath, STUB, targetFile, ...(ca ? [ca] : [])], { stdio: ["ignore", "pipe", "pipe"] });
  let stubLog = "";
  stub.stderr!.on("data", (d: Buffer) => (stubLog += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`the API stub did not start: ${stubLog}`)), 15_000);
    stub.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("\n")) {
        clearTimeout(timer);
        resolve(Number(out.trim()));
      }
    });
    stub.once("exit", () => reject(new Error(`the API stub exited: ${stubLog}`)));
  });
  const kubeconfig = join(dir, "kubeconfig");
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: "v1", kind: "Config", "current-context": "stub",
      clusters: [{ name: "stub", cluster: { server: `http://127.0.0.1:${port}` } }],
      contexts: [{ name: "stub", context: { cluster: "stub", user: "stub", namespace: "default" } }],
      users: [{ name: "stub", user: {} }],
    }),
  );
  const env = (extra: Record<string, string> = {}) => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, KUBECONFIG: kubeconfig, ...extra });
  const children = new Set<ChildProcess>();
  const quote = (a: string) => `'${a.replace(/'/g, "'\\''")}'`;
  return {
    port,
    target: (url) => writeFileSync(targetFile, url),
    kubectl(args, run = {}) {
      const cmd = run.tty
        ? ["script", "-qec", `stty rows ${run.tty.rows} cols ${run.tty.cols}; exec kubectl ${args.map(quote).join(" ")}`, "/dev/null"]
        : ["kubectl", ...args];
      const child = spawn("nsenter", [`--net=${netnsFile}`, "--", ...cmd], { env: env(run.env), stdio: ["pipe", "pipe", "pipe"] });
      children.add(child);
      return new Promise((resolve) => {
        let stdout = "";
        let stderr = "";
        child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
        child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
        const timer = setTimeout(() => child.kill("SIGKILL"), run.timeoutMs ?? 60_000);
        child.once("close", (code) => {
          clearTimeout(timer);
          children.delete(child);
          resolve({ code, stdout, stderr });
        });
        child.stdin!.on("error", () => {});
        if (run.input !== undefined) child.stdin!.end(run.input);
        else if (!run.tty) child.stdin!.end();
      });
    },
    spawnKubectl(args, extra = {}) {
      const child = spawn("nsenter", [`--net=${netnsFile}`, "--", "kubectl", ...args], { env: env(extra), stdio: ["ignore", "pipe", "pipe"] });
      children.add(child);
      let output = "";
      child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
      child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
      child.once("close", () => children.delete(child));
      return { child, output: () => output };
    },
    log: () => stubLog,
    async stop() {
      for (const c of children) c.kill("SIGKILL");
      stub.kill("SIGTERM");
      if (stub.exitCode === null) await new Promise((resolve) => stub.once("exit", resolve));
    },
  };
}
