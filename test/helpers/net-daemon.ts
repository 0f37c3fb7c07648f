/**
 * A daemon in a network namespace of its own, for the networking tests: the namespace is made
 * here (`unshare --net=FILE`, loopback up), the real `bin/engined` runs in it with its default
 * bridge, a `busybox` image is imported through the Docker CLI, and `stop` removes the
 * containers, the daemon and the namespace (with every interface and rule made in it). Options
 * (`NetDaemonOptions`) start it in another daemon's namespace, prepare the namespace before the
 * daemon starts, or keep its roots in a folder of the caller's for a restart.
 * Traffic in these tests goes only to addresses made in such namespaces.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { busyboxRootfs, writeFixture } from "../fixtures/images.js";
import { docker } from "./docker-cli.js";
import { makeTempDir, startEngined, type TestDaemon } from "./engined.js";

export interface Netns {
  file: string;
  /** Runs a command in the namespace; its stdout, or throws with its stderr. */
  run(cmd: string, ...args: string[]): string;
  /** Like run, but resolves with the exit status instead of throwing. */
  status(cmd: string, ...args: string[]): number;
  remove(): void;
}

/**
 * A new namespace inherits IPv4 settings (forwarding among them) from the host's: a host where
 * something turned forwarding on would change what the tests see. They start from the kernel's
 * defaults instead, whatever the host has.
 */
export function fromKernelDefaults(nsFile: string): void {
  execFileSync("nsenter", [`--net=${nsFile}`, "--", "sysctl", "-q", "-w", "net.ipv4.ip_forward=0"]);
}

export function makeNetns(): Netns {
  const file = join(makeTempDir("engine-netns-"), "ns");
  writeFileSync(file, "");
  execFileSync("unshare", [`--net=${file}`, "--", "ip", "link", "set", "lo", "up"]);
  fromKernelDefaults(file);
  return {
    file,
    run: (cmd, ...args) => execFileSync("nsenter", [`--net=${file}`, "--", cmd, ...args], { encoding: "utf8", timeout: 20_000 }),
    status: (cmd, ...args) => spawnSync("nsenter", [`--net=${file}`, "--", cmd, ...args], { timeout: 20_000 }).status ?? -1,
    remove: () => {
      spawnSync("umount", ["--lazy", file]);
      rmSync(file, { force: true });
    },
  };
}

export interface NetDaemon {
  d: TestDaemon;
  ns: Netns;
  host: string;
  cli(...args: string[]): Promise<string>;
  stop(): Promise<void>;
}

export interface NetDaemonOptions {
  /**
   * Run in this namespace (another daemon's: several daemons in one namespace) instead of a new
   * one; it stays for its owner to remove.
   */
  netns?: Netns;
  /** Runs in the namespace before the daemon starts (interfaces or routes it must find there). */
  prepare?: (ns: Netns) => void;
  /**
   * Keep the data root, exec root and pid file in this folder (the caller's, not removed at stop),
   * so that a daemon started again on it finds its containers (live restore). busybox is imported
   * only when the data root has no image of that name yet.
   */
  roots?: string;
}

export async function startNetDaemon(args: string[] = [], opts: NetDaemonOptions = {}): Promise<NetDaemon> {
  const ns = opts.netns ?? makeNetns();
  const removeNs = () => {
    if (!opts.netns) ns.remove();
  };
  let d: TestDaemon | undefined;
  try {
    opts.prepare?.(ns);
    const roots = opts.roots ? ["--data-root", join(opts.roots, "data"), "--exec-root", join(opts.roots, "exec"), "--pidfile", join(opts.roots, "engine.pid")] : [];
    d = await startEngined({ netns: ns.file, args: [...roots, ...args] });
    const host = `unix://${d.socket}`;
    const cli = async (...a: string[]) => {
      const r = await docker(host, a);
      if (r.code !== 0) throw new Error(`docker ${a.join(" ")} exited ${r.code}: ${r.stderr}`);
      return r.stdout;
    };
    if (!opts.roots || (await cli("images", "-q", "busybox")).trim() === "") {
      const dir = makeTempDir();
      await cli("import", "--change", 'CMD ["sh"]', "--change", "ENV PATH=/bin", writeFixture(dir, "rootfs.tar", await busyboxRootfs()), "busybox");
    }
    const daemon = d;
    return {
      d: daemon,
      ns,
      host,
      cli,
      stop: async () => {
        const ids = (await cli("ps", "-aq").catch(() => "")).split("\n").filter(Boolean);
        if (ids.length) await docker(host, ["rm", "-f", ...ids]);
        await daemon.stop();
        removeNs();
      },
    };
  } catch (err) {
    await d?.stop();
    removeNs();
    throw err;
  }
}

/** Polls `check` (bounded) until it holds. */
export async function eventually(what: string, check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting: ${what}`);
    await sleep(100);
  }
}
