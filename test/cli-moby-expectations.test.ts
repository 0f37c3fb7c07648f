/**
 * What moby's legacy CLI suite (integration-cli: docker_cli_run_test.go, docker_cli_exec_test.go,
 * docker_cli_ps_test.go, docker_cli_inspect_test.go...) expects of a daemon through the Docker
 * CLI, where engined answered otherwise: a user or group number out of range, a working
 * directory made at create (and refused there when the image has a file at it), the network's
 * files read-only with a read-only root, a container joining its own network, a bind's mode
 * given to a volume or another container's volumes, the order of a removal's event, the state of a
 * container its restart policy restarts.
 * Against a real engined.
 */
import "./helpers/root-hooks.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { docker, dockerChecks } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

describe("what moby's CLI integration suite expects of a daemon", function () {
  this.timeout(120_000);
  let d: TestDaemon;
  let host: string;
  const { ok: cli, run, fails } = dockerChecks(() => host);

  before(async () => {
    d = await startEngined();
    host = `unix://${d.socket}`;
    const rootfs = writeFixture(makeTempDir("engine-cli-moby-"), "rootfs.tar", await busyboxRootfs());
    await cli("import", "--change", 'CMD ["sh"]', rootfs, "busybox");
  });
  afterEach(async () => {
    const ids = (await run("ps", "-aq")).stdout.split("\n").filter(Boolean);
    if (ids.length) await run("rm", "-f", ...ids);
  });
  after(async () => d?.stop());

  it("refuses a user or group number out of 0..2^31-1 in the user library's words (TestRunUserByIDBig, TestRunUserByIDNegative)", async () => {
    for (const args of [["-u", "2147483648"], ["-u", "-1"], ["-u", "0:-1"], ["--group-add", "2147483648"]]) {
      const r = await run("run", "--rm", ...args, "busybox", "id");
      expect([r.code, r.stderr], args.join(" ")).to.satisfy(([code, err]: [number, string]) => code === 125 && err.includes("Error response from daemon: uids and gids must be in range 0-2147483647\n"));
    }
    // the largest, and a number with its sign, as Go's Atoi reads it
    expect(await cli("run", "--rm", "-u", "2147483647", "busybox", "id", "-u")).to.equal("2147483647\n");
    expect(await cli("run", "--rm", "-u", "+1", "busybox", "id", "-u")).to.equal("1\n");
  });

  it("makes the working directory at create, and refuses one the image has a file at then (TestRunWorkdirExistsAndIsFile)", async () => {
    await cli("create", "--name", "wd", "-w", "/newdir/sub", "busybox");
    expect(await cli("diff", "wd")).to.equal("A /newdir\nA /newdir/sub\n");
    const r = await run("run", "--rm", "--name", "wf", "-w", "/bin/cat", "busybox", "true");
    expect(r.code).to.equal(125);
    expect(r.stderr).to.contain("Error response from daemon: Cannot mkdir: /bin/cat is not a directory");
    // no container is left of it
    expect(await fails("inspect", "wf")).to.contain("No such object: wf");
  });

  it("makes the network's files read-only with a read-only root, but not a user's mount over one (TestRunContainerWithReadonlyRootfs)", async () => {
    const r = await run("run", "--rm", "--read-only", "busybox", "sh", "-c", "touch /file /etc/hosts /etc/resolv.conf /etc/hostname");
    expect(r.code).to.equal(1);
    for (const f of ["/file", "/etc/hosts", "/etc/resolv.conf", "/etc/hostname"]) expect(r.stderr).to.contain(`touch: ${f}: Read-only file system`);
    const hosts = join(makeTempDir("engine-cli-moby-hosts-"), "hosts");
    writeFileSync(hosts, "1.2.3.4 mine\n");
    expect(await cli("run", "--rm", "--read-only", "-v", `${hosts}:/etc/hosts`, "busybox", "sh", "-c", "touch /etc/hosts && echo writable")).to.equal("writable\n");
    expect(await cli("run", "--rm", "busybox", "sh", "-c", "touch /etc/hosts && echo writable")).to.equal("writable\n");
  });

  it("refuses a container joining its own network namespace in Docker 28's words (TestRunContainerNetworkModeToSelf)", async () => {
    const r = await run("run", "--name", "me", "--net", "container:me", "busybox", "true");
    expect(r.code).to.equal(125);
    expect(r.stderr).to.contain("Error response from daemon: cannot join own network namespace\n");
  });
  it("refuses a propagation for a named volume and nocopy for a bind, as the other type's options (TestRunNamedVolumesMountedAsShared)", async () => {
    expect(await fails("create", "-v", "foo:/test:shared", "busybox")).to.contain(
      `invalid volume specification: 'foo:/test:shared': invalid mount config for type "volume": field BindOptions must not be specified`,
    );
    expect(await fails("create", "-v", "/tmp:/t:nocopy", "busybox")).to.contain(
      `invalid volume specification: '/tmp:/t:nocopy': invalid mount config for type "bind": field VolumeOptions must not be specified`,
    );
    expect((await run("volume", "ls", "-q")).stdout).to.equal("");
  });
  it("refuses a copy mode or a propagation for the volumes of another container (TestRunVolumeCopyFlag)", async () => {
    await cli("create", "--name", "vtest", "-v", "/foo", "busybox");
    for (const mode of ["nocopy", "shared", "ro,rslave"]) {
      expect(await fails("create", `--volumes-from=vtest:${mode}`, "busybox")).to.contain(`Error response from daemon: invalid mode: ${mode}\n`);
    }
    await cli("create", "--volumes-from=vtest:ro,z", "busybox");
  });
  it("shows a container its restart policy restarts as running throughout, and refuses an exec then in Docker's words (TestRestartContainerwithRestartPolicy)", async () => {
    await cli("run", "-d", "--name", "flaps", "--restart=always", "busybox", "sh", "-c", "exit 1");
    const seen = new Set<string>();
    for (let i = 0; i < 30; i++) {
      seen.add((await cli("inspect", "-f", "{{.State.Restarting}} {{.State.Running}}", "flaps")).trim());
      await new Promise((r) => setTimeout(r, 100));
    }
    // restarting (waiting or starting again) is running for every check, as Docker's SetRestarting has it
    expect([...seen].sort()).to.satisfy((states: string[]) => states.includes("true true") && !states.includes("true false"));
    // the back-off is seconds long by now: an exec asked for while it waits is refused
    for (let i = 0; i < 100 && (await cli("inspect", "-f", "{{.State.Restarting}}", "flaps")).trim() !== "true"; i++) await new Promise((r) => setTimeout(r, 50));
    const r = await run("exec", "flaps", "true");
    expect([r.code, r.stderr]).to.satisfy(([code, err]: [number, string]) => code === 1 && /Error response from daemon: Container [0-9a-f]{64} is restarting, wait until the container is running\n/.test(err));
  });
  it("announces a removal after its volumes are gone, so that the CLI's own --rm before API 1.25 has its answer (TestRunRmPre125Api)", async () => {
    const volumes = async () => (await run("volume", "ls", "-q")).stdout;
    const before = await volumes();
    for (let i = 0; i < 3; i++) {
      const r = await docker(host, ["run", "--name", "old-rm", "--rm", "-v", "/anon", "busybox", "true"], { DOCKER_API_VERSION: "1.24" });
      expect([r.code, r.stderr]).to.deep.equal([0, ""]);
      expect(await fails("inspect", "old-rm")).to.contain("No such object: old-rm");
    }
    expect(await volumes()).to.equal(before);
  });
});
