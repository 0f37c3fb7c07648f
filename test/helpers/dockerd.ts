/**
 * Docker's own daemon for tests that compare engined with it (where `dockerd` is installed):
 * started as bench/image-load.mjs starts it, with a docker-registry inside its network namespace
 * that serves a test registry's storage, and stopped by pid with everything it started.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir } from "./engined.js";
import { httpRequest } from "./http.js";
import type { TestRegistry } from "./registry.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether a command is on the PATH. */
export function have(cmd: string): boolean {
  try {
    execFileSync("which", [cmd], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

export interface Dockerd {
  socket: string;
  /** `unix://<socket>`, for the Docker CLI's -H. */
  host: string;
  stop(): Promise<void>;
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

function descendants(pid: number): number[] {
  const procs: { pid: number; ppid: number }[] = [];
  for (const name of execFileSync("ls", ["/proc"], { encoding: "utf8" }).split("\n")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      procs.push({ pid: Number(name), ppid: Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) });
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const queue = [pid];
  while (queue.length) {
    const p = queue.shift()!;
    for (const c of procs) if (c.ppid === p) (out.push(c.pid), queue.push(c.pid));
  }
  return out;
}

async function stopPid(pid: number, graceMs: number): Promise<void> {
  if (!alive(pid)) return;
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return;
  }
  const until = Date.now() + graceMs;
  while (alive(pid) && Date.now() < until) await sleep(50);
  if (alive(pid)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
}

/** Whether the network namespace of `pid` has a TCP socket listening on 127.0.0.1:port. */
function listeningIn(pid: number, port: number): boolean {
  try {
    const want = `0100007F:${port.toString(16).toUpperCase().padStart(4, "0")}`;
    return readFileSync(`/proc/${pid}/net/tcp`, "utf8").split("\n").some((line) => {
      const f = line.trim().split(/\s+/);
      return f[1] === want && f[3] === "0A";
    });
  } catch {
    return false;
  }
}

/**
 * Docker's daemon as bench/image-load.mjs starts it: its own data root, exec root, socket and
 * pid file, in its own network namespace (`unshare --net`) with no bridge and no iptables. The
 * host's 127.0.0.1 is not reachable from there, so (as bench/pull.mjs does) a second
 * docker-registry is started inside that namespace (`nsenter --net`), serving the same storage
 * folder read-only on the same port: the same manifests and blobs under the same name. Without
 * `reg` it has no registry and no network at all (its loopback stays down).
 */
export async function startDockerd(reg?: TestRegistry): Promise<Dockerd> {
  const dir = makeTempDir("engine-dockerd-");
  const socket = join(dir, "d.sock");
  const fd = openSync(join(dir, "dockerd.log"), "a");
  const proc: ChildProcess = spawn("unshare", ["--net", "dockerd", "-H", `unix://${socket}`, "--data-root", join(dir, "data"), "--exec-root", join(dir, "exec"),
    "--pidfile", join(dir, "d.pid"), "--bridge=none", "--iptables=false", "--ip6tables=false"], { stdio: ["ignore", fd, fd] });
  closeSync(fd);
  let registry: ChildProcess | undefined;
  const pid = proc.pid!;
  const stop = async () => {
    const children = descendants(pid);
    if (registry?.pid) await stopPid(registry.pid, 3000);
    await stopPid(pid, 15_000);
    for (const c of children) await stopPid(c, 5000);
    const mounts = readFileSync("/proc/self/mountinfo", "utf8").split("\n").map((l) => l.split(" ")[4]).filter((m) => m && m.startsWith(`${dir}/`));
    for (const m of mounts.reverse()) {
      try {
        execFileSync("umount", ["-l", m], { stdio: "ignore" });
      } catch {
        // gone meanwhile
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const until = Date.now() + 30_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`dockerd exited: ${readFileSync(join(dir, "dockerd.log"), "utf8").slice(-1000)}`);
      if (Date.now() > until) throw new Error("dockerd was not ready in 30 s");
      const ok = await httpRequest({ socketPath: socket }, "GET", "/_ping").then((r) => r.status === 200, () => false);
      if (ok) break;
      await sleep(50);
    }
    if (!reg) return { socket, host: `unix://${socket}`, stop };
    const netns = `/proc/${pid}/ns/net`;
    execFileSync("nsenter", [`--net=${netns}`, "ip", "link", "set", "lo", "up"], { stdio: "ignore", timeout: 10_000 });
    const port = Number(reg.host.split(":")[1]);
    const config = join(dir, "registry.yml");
    writeFileSync(config, [
      "version: 0.1",
      "log:",
      "  level: warn",
      "storage:",
      "  filesystem:",
      `    rootdirectory: ${join(reg.dir, "storage")}`,
      "  maintenance:",
      "    uploadpurging:",
      "      enabled: false",
      "    readonly:",
      "      enabled: true",
      "http:",
      `  addr: 127.0.0.1:${port}`,
      "  secret: engine-test-registry-secret",
      "",
    ].join("\n"));
    const rfd = openSync(join(dir, "registry.log"), "a");
    registry = spawn("nsenter", [`--net=${netns}`, "docker-registry", "serve", config], { stdio: ["ignore", rfd, rfd] });
    closeSync(rfd);
    const runtil = Date.now() + 15_000;
    while (!listeningIn(pid, port)) {
      if (registry.exitCode !== null || Date.now() > runtil) throw new Error(`the registry in dockerd's namespace did not start: ${readFileSync(join(dir, "registry.log"), "utf8").slice(-500)}`);
      await sleep(20);
    }
    return { socket, host: `unix://${socket}`, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
