/**
 * Docker's own daemon (Debian's `dockerd`) for tests that check engined's answers against it:
 * started in a network namespace of its own (`unshare --net`: its bridge and iptables rules,
 * if any, stay there; it reaches no network at all), with its own data root, exec root, socket
 * and pid file in a temporary folder, and `--bridge=none`. `stop()` ends it by its pid and
 * removes what it made, mounts and leftover shims included.
 */
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { connect } from "node:net";
import { makeTempDir } from "./engined.js";

export interface ReferenceDockerd {
  socket: string;
  host: string;
  stop(): Promise<void>;
}

export const haveDockerd = (): boolean => ["/usr/sbin/dockerd", "/usr/bin/dockerd"].some((p) => existsSync(p));

function unmountUnder(dir: string): void {
  const mounts = readFileSync("/proc/self/mountinfo", "utf8").split("\n").map((l) => l.split(" ")[4]).filter((m) => m && (m === dir || m.startsWith(`${dir}/`)));
  for (const m of mounts.reverse()) {
    try {
      execFileSync("umount", ["--lazy", m], { stdio: "ignore", timeout: 10_000 });
    } catch {
      // gone meanwhile
    }
  }
}

/** Children of `pid` (shims and containerd), from /proc. */
function descendants(pid: number): number[] {
  const out: number[] = [];
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
    for (const c of children) out.push(c, ...descendants(c));
  } catch {
    // gone
  }
  return out;
}

async function socketAnswers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(path);
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

export async function startReferenceDockerd(limitMs = 30_000): Promise<ReferenceDockerd> {
  const dir = makeTempDir("engine-ref-dockerd-");
  const socket = join(dir, "d.sock");
  const proc: ChildProcess = spawn(
    "unshare",
    ["--net", "dockerd", "-H", `unix://${socket}`, "--data-root", join(dir, "data"), "--exec-root", join(dir, "exec"), "--pidfile", join(dir, "d.pid"), "--bridge=none", "--iptables=false", "--ip6tables=false"],
    { stdio: "ignore" },
  );
  const stop = async () => {
    const pids = proc.pid ? descendants(proc.pid) : [];
    if (proc.exitCode === null) {
      proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), 15_000);
      await new Promise((r) => (proc.exitCode !== null ? r(null) : proc.once("exit", r)));
      clearTimeout(timer);
    }
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone with the daemon
      }
    }
    unmountUnder(dir);
    rmSync(dir, { recursive: true, force: true });
  };
  const until = Date.now() + limitMs;
  while (!(await socketAnswers(socket))) {
    if (proc.exitCode !== null || Date.now() > until) {
      await stop();
      throw new Error("dockerd did not start");
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { socket, host: `unix://${socket}`, stop };
}
