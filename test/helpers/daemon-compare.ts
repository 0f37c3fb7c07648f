/**
 * The same Docker CLI command lines against engined and Docker's own daemon, in order, with
 * what differs between the two answers (exit status, output, errors) once IDs are normalised
 * and lines sorted (images made in the same second are listed in any order by Docker). Each
 * line runs under bash with DOCKER_HOST set; `$TAR` in a line is replaced by `vars.TAR`, and so
 * on for each variable given. Lines must name only local images (`--pull never`).
 * `useComparedDaemons` is a suite's pair of daemons: both started before its tests with busybox
 * imported, each test's containers removed after it, both stopped at the end (skipped where
 * Docker's daemon is not installed). Each runs in a network namespace of its own with no bridge
 * and no iptables rules (dockerd.ts starts Docker's so): a network a line creates, its bridge
 * included, never reaches the host's namespace.
 */
import { spawnSync } from "node:child_process";
import { expect } from "chai";
import { busyboxRootfs, writeFixture } from "../fixtures/images.js";
import { docker } from "./docker-cli.js";
import { have, startDockerd, type Dockerd } from "./dockerd.js";
import { makeTempDir, startEngined, type TestDaemon } from "./engined.js";
import { makeNetns, type Netns } from "./net-daemon.js";

const normalise = (text: string) => text.replace(/[0-9a-f]{12,64}/g, "<id>").split("\n").sort().join("\n");

function run(host: string, line: string, vars: Record<string, string>) {
  let command = line;
  for (const [name, value] of Object.entries(vars)) command = command.replaceAll(`$${name}`, value);
  const r = spawnSync("bash", ["-c", command], { encoding: "utf8", env: { ...process.env, DOCKER_HOST: host }, timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The lines answered differently, each with both answers (empty when none was). */
export function compareDaemons(hosts: { engined: string; dockerd: string }, lines: readonly string[], vars: Record<string, string> = {}): string {
  const differences: string[] = [];
  for (const line of lines) {
    const [ours, theirs] = [run(hosts.engined, line, vars), run(hosts.dockerd, line, vars)];
    const same = ours.code === theirs.code && normalise(ours.stdout) === normalise(theirs.stdout) && normalise(ours.stderr) === normalise(theirs.stderr);
    if (!same) differences.push(`$ ${line}\n  engined ${JSON.stringify(ours)}\n  dockerd ${JSON.stringify(theirs)}`);
  }
  return differences.join("\n");
}

/** Removes every container of the daemon at `host` (running ones too), as a test's clean-up. */
export async function removeAllContainers(host: string): Promise<void> {
  const ids = (await docker(host, ["ps", "-aq"])).stdout.split("\n").filter(Boolean);
  if (ids.length) await docker(host, ["rm", "-f", ...ids]);
}

/**
 * A suite's engined and dockerd, with `busybox` imported in both; `hosts()` for compareDaemons,
 * and `itAnswersAlike(title, lines)`: a test that runs the lines against both and wants no line
 * answered differently.
 */
export function useComparedDaemons(): { hosts(): { engined: string; dockerd: string }; itAnswersAlike(title: string, lines: readonly string[]): void } {
  let d: TestDaemon | undefined;
  let ref: Dockerd | undefined;
  let ns: Netns | undefined;
  const hosts = () => ({ engined: `unix://${d!.socket}`, dockerd: ref!.host });
  before(async function () {
    if (!have("dockerd")) this.skip();
    const tar = writeFixture(makeTempDir("engine-compare-"), "rootfs.tar", await busyboxRootfs());
    ns = makeNetns();
    // as Docker's is started: no bridge, no iptables (the later flags win over the namespace's default bridge)
    const alike = ["--bridge", "none", "--iptables=false", "--ip6tables=false"];
    [d, ref] = await Promise.all([startEngined({ netns: ns.file, args: alike }), startDockerd()]);
    for (const host of Object.values(hosts())) {
      const r = await docker(host, ["import", "--change", 'CMD ["sh"]', "--change", "ENV PATH=/bin", tar, "busybox"]);
      expect(r.code, r.stderr).to.equal(0);
    }
  });
  afterEach(async function () {
    for (const host of d && ref ? Object.values(hosts()) : []) await removeAllContainers(host);
  });
  after(async function () {
    await d?.stop();
    await ref?.stop();
    ns?.remove();
  });
  const itAnswersAlike = (title: string, lines: readonly string[]) =>
    it(title, function () {
      expect(compareDaemons(hosts(), lines), "lines answered differently").to.equal("");
    });
  return { hosts, itAnswersAlike };
}
