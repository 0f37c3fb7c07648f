/**
 * The two daemons the builder's tests build on: engined, and Docker's own daemon (dockerd
 * 20.10 with its classic builder, in a network namespace of its own) when it is installed, each
 * with the same `busybox` image imported; the Docker CLI's classic build against either; and
 * what of a build's output and history may differ between them made alike (image IDs, the
 * checksums of copied files, the intermediate containers Docker makes for steps that run none).
 */
import { expect } from "chai";
import { busyboxRootfs, writeFixture } from "../fixtures/images.js";
import { docker } from "./docker-cli.js";
import { makeTempDir, startEngined, type RunResult, type TestDaemon } from "./engined.js";
import { have, startDockerd, type Dockerd } from "./dockerd.js";

export interface BuildDaemon {
  name: "engined" | "dockerd";
  host: string;
  socket: string;
  /** engined's folder (its roots), for the leftover checks. */
  dir?: string;
  stop(): Promise<void>;
}

export interface BuildDaemons {
  engined: BuildDaemon;
  /** Undefined where dockerd is not installed: the comparisons are skipped. */
  dockerd?: BuildDaemon;
  rootfs: string;
  stop(): Promise<void>;
}

/** engined (with these extra flags) and dockerd, busybox imported into both. */
export async function startBuildDaemons(engineArgs: string[] = []): Promise<BuildDaemons> {
  const rootfs = writeFixture(makeTempDir("engine-build-daemons-"), "rootfs.tar", await busyboxRootfs());
  const d: TestDaemon = await startEngined({ args: engineArgs });
  const engined: BuildDaemon = { name: "engined", host: `unix://${d.socket}`, socket: d.socket, dir: d.dir, stop: async () => void (await d.stop()) };
  let ref: Dockerd | undefined;
  try {
    if (have("dockerd")) ref = await startDockerd();
  } catch {
    ref = undefined; // the comparisons are skipped
  }
  const dockerd: BuildDaemon | undefined = ref && { name: "dockerd", host: ref.host, socket: ref.socket, stop: () => ref!.stop() };
  for (const daemon of [engined, dockerd]) if (daemon) await cliOk(daemon.host, ["import", "-c", 'CMD ["sh"]', rootfs, "busybox"]);
  return {
    engined,
    dockerd,
    rootfs,
    stop: async () => {
      await engined.stop();
      await dockerd?.stop();
    },
  };
}

/** The Docker CLI; fails the test naming the command unless it exits 0. Its stdout. */
export async function cliOk(host: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const r = await docker(host, args, env, { timeoutMs: 120_000 });
  expect(r.code, `docker ${args.join(" ")}: ${r.stderr}${r.stdout}`).to.equal(0);
  return r.stdout;
}

/** `docker build` with the classic builder (DOCKER_BUILDKIT=0). */
export function cliBuild(host: string, args: string[]): Promise<RunResult> {
  return docker(host, ["build", ...args], { DOCKER_BUILDKIT: "0" }, { timeoutMs: 120_000 });
}

/**
 * A build's output with what differs between daemons made alike: image and container IDs, and
 * the lines of the containers dockerd 20.10 makes for the steps that run nothing (engined
 * makes none; each RUN's own are kept).
 */
export function streamShape(text: string): string {
  const lines = text.replace(/^[\r]*Sending build context[^\n]*\n/m, "").split("\n");
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    // a container line pair with nothing between: a step that ran no command (both daemons commit one through a container)
    if (/^ ---> Running in \w{12}$/.test(lines[i]) && /^Removing intermediate container \w{12}$/.test(lines[i + 1] ?? "")) {
      i++;
      continue;
    }
    out.push(lines[i]);
  }
  return out.join("\n").replace(/\b[0-9a-f]{12}\b/g, "<id>");
}

/**
 * `docker history` lines (`CreatedBy|0B`, or `CreatedBy|+` for a layer with content) with the
 * checksums of copied files made alike. (The sizes themselves differ where a layer holds
 * symlinks: dockerd counts their targets' lengths, engined does not.)
 */
export async function historyShape(host: string, image: string): Promise<string[]> {
  const out = await cliOk(host, ["history", "--no-trunc", "--format", "{{.CreatedBy}}|{{.Size}}", image]);
  return out
    .trim()
    .split("\n")
    .map((l) => l.replace(/(file|dir|multi):[0-9a-f]{64}/g, "$1:<sum>").replace(/(ADD) [0-9a-f]{64} in/g, "$1 <sum> in").replace(/\|([^|]*)$/, (_, size: string) => (size === "0B" ? "|0B" : "|+")))
    // dockerd 20.10's HEALTHCHECK entry has no StartInterval (Docker 25 added it)
    .map((l) => l.replace(`"0s" "0s" "0s" "0s" '\\x00'`, `"0s" "0s" "0s" '\\x00'`));
}

/** The image's config, as `docker image inspect` gives it. */
export async function imageConfig(host: string, image: string): Promise<Record<string, unknown>> {
  return JSON.parse(await cliOk(host, ["image", "inspect", "--format", "{{json .Config}}", image]));
}
