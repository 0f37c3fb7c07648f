/**
 * Container options engined used to ignore, matched to Docker's daemon (dockerd 20.10, started
 * in its own network namespace, for what it does; Docker 28 for --gpus through CDI and
 * annotations), through the Docker CLI and dockerode against a real engined with its bridge in a
 * namespace of its own: `--device` (a node, a folder of nodes, a missing path), `--device-cgroup-rule`,
 * `--privileged` with the host's devices, `--gpus` as CDI devices of a fake `nvidia.com/gpu` spec,
 * `--volumes-from`, `--pid`/`--ipc container:`, `--oom-score-adj`, `--memory-swappiness`,
 * `--blkio-weight`, `--annotation`, `--mac-address`, and the runtime inspect shows.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import Docker from "dockerode";
import { httpRequest } from "./helpers/http.js";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dockerChecks } from "./helpers/docker-cli.js";
import { makeTempDir, runCommand } from "./helpers/engined.js";
import { startNetDaemon, type NetDaemon } from "./helpers/net-daemon.js";

describe("container options in the OCI spec (Docker CLI and dockerode)", function () {
  this.timeout(180_000);

  let n: NetDaemon;
  let work: string;
  let cdiDir: string;
  let sdk: Docker;
  const { run, ok, fails } = dockerChecks(() => n.host);

  before(async function () {
    work = makeTempDir("engine-options-");
    cdiDir = join(work, "cdi");
    mkdirSync(cdiDir);
    n = await startNetDaemon(["--cdi-spec-dir", cdiDir]);
    sdk = new Docker({ socketPath: n.d.socket });
  });
  afterEach(async function () {
    const ids = (await ok("ps", "-aq")).split("\n").filter(Boolean);
    if (ids.length) await run("rm", "-f", ...ids);
    rmSync(cdiDir, { recursive: true, force: true });
    mkdirSync(cdiDir);
  });
  after(async function () {
    await n?.stop();
  });

  describe("devices", function () {
    it("--device gives the node at another path with its permissions: loop-control readable, not writable with :r", async function () {
      const out = await ok(
        "run", "--rm", "--device", "/dev/loop-control:/dev/lc:r", "busybox", "sh", "-c",
        "ls -l /dev/lc; head -c0 < /dev/lc && echo read-ok; (echo x > /dev/lc) 2>&1 || echo write-refused",
      );
      const lines = out.trim().split("\n");
      // the host's mode (0600 here), owner and numbers
      expect(lines[0]).to.match(/^crw------- +1 root +root +10, +237 .* \/dev\/lc$/);
      expect(lines[1]).to.equal("read-ok");
      expect(lines.at(-1)).to.equal("write-refused");
      expect(lines.join("\n")).to.include("Operation not permitted");
    });

    it("--device of a folder gives every node under it, with the host's modes, at the container's path", async function () {
      const dir = join(work, "devdir");
      mkdirSync(join(dir, "sub"), { recursive: true });
      writeFileSync(join(dir, "plain"), "not a device");
      for (const [path, minor, mode] of [["n1", "3", "600"], ["sub/z", "5", "644"]]) {
        rmSync(join(dir, path), { force: true });
        const r = await runCommand("mknod", ["-m", mode, join(dir, path), "c", "1", minor]);
        expect(r.code, r.stderr).to.equal(0);
      }
      const out = await ok("run", "--rm", "--device", `${dir}:/dev/dd:rw`, "busybox", "sh", "-c", "ls -l /dev/dd/n1 /dev/dd/sub/z; ls /dev/dd");
      expect(out).to.match(/crw------- +1 root +root +1, +3 .* \/dev\/dd\/n1/);
      expect(out).to.match(/crw-r--r-- +1 root +root +1, +5 .* \/dev\/dd\/sub\/z/);
      expect(out).to.not.include("plain");
    });

    it("a missing device, or a path that is no device, fails the start with Docker's message", async function () {
      expect(await fails("run", "--rm", "--device", "/dev/engine-no-such-device", "busybox", "true")).to.include(
        'error gathering device information while adding custom device "/dev/engine-no-such-device": no such file or directory',
      );
      const file = join(work, "regular-file");
      writeFileSync(file, "x");
      expect(await fails("run", "--rm", "--device", file, "busybox", "true")).to.include(
        `error gathering device information while adding custom device "${file}": not a device node`,
      );
    });

    it("--device-cgroup-rule lets a node made inside be opened; without it the cgroup refuses it", async function () {
      const script = "mknod /tmp/lc c 10 237 && (head -c0 < /tmp/lc && echo opened) 2>&1";
      expect((await ok("run", "--rm", "--device-cgroup-rule", "c 10:237 r", "busybox", "sh", "-c", script)).trim()).to.equal("opened");
      expect(await ok("run", "--rm", "busybox", "sh", "-c", `${script}; true`)).to.include("Operation not permitted");
      expect((await ok("run", "--rm", "--device-cgroup-rule", "c *:* rwm", "busybox", "sh", "-c", script)).trim()).to.equal("opened");
    });

    it("a bad cgroup rule (dockerode: the CLI checks its own) fails the start with Docker's 500", async function () {
      const c = await sdk.createContainer({ Image: "busybox", Cmd: ["true"], HostConfig: { DeviceCgroupRules: ["bad rule"] } });
      const err = await c.start().then(() => undefined, (e: { statusCode: number; json: { message: string } }) => e);
      expect(err?.statusCode).to.equal(500);
      expect(err?.json.message).to.equal("invalid device cgroup rule format: 'bad rule'");
    });

    it("--privileged: the host's devices in /dev and every capability of the daemon's bounding set", async function () {
      const out = await ok("run", "--rm", "--privileged", "busybox", "sh", "-c", "ls /dev; grep CapEff /proc/self/status");
      const names = out.split("\n");
      for (const dev of ["loop-control", "null", "zero", "full"]) if (existsSync(`/dev/${dev}`)) expect(names).to.include(dev);
      const bounding = /^CapBnd:\s*(\S+)$/m.exec(readFileSync("/proc/self/status", "utf8"))![1];
      expect(out).to.match(new RegExp(`CapEff:\\s*${bounding}`));
    });
  });

  describe("--gpus through CDI", function () {
    const writeGpuSpec = () =>
      writeFileSync(
        join(cdiDir, "nvidia.yaml"),
        [
          'cdiVersion: "0.5.0"',
          "kind: nvidia.com/gpu",
          "devices:",
          ...["0", "1"].flatMap((i) => [`  - name: "${i}"`, "    containerEdits:", "      deviceNodes:", `        - path: /dev/nvidia${i}`, "          hostPath: /dev/null"]),
          '  - name: "all"',
          "    containerEdits:",
          "      deviceNodes:",
          ...["0", "1"].flatMap((i) => [`        - path: /dev/nvidia${i}`, "          hostPath: /dev/null"]),
          "",
        ].join("\n"),
      );

    it("--gpus all and --gpus device=0,1 are the nvidia.com/gpu CDI devices, device=1 only that one", async function () {
      writeGpuSpec();
      const list = "ls /dev | grep nvidia || true";
      expect((await ok("run", "--rm", "--gpus", "all", "busybox", "sh", "-c", list)).trim().split("\n")).to.deep.equal(["nvidia0", "nvidia1"]);
      expect((await ok("run", "--rm", "--gpus", '"device=0,1"', "busybox", "sh", "-c", list)).trim().split("\n")).to.deep.equal(["nvidia0", "nvidia1"]);
      expect((await ok("run", "--rm", "--gpus", "device=1", "busybox", "sh", "-c", list)).trim()).to.equal("nvidia1");
    });

    it("without a spec of that kind, Docker's error", async function () {
      expect(await fails("run", "--rm", "--gpus", "all", "busybox", "true")).to.include('could not select device driver "" with capabilities: [[gpu]]');
    });
  });

  describe("volumes from and shared namespaces", function () {
    it("--volumes-from copies the mounts, read-only with :ro; inspect shows the entry as given", async function () {
      await ok("run", "-d", "--name", "donor", "-v", "/data", "busybox", "sh", "-c", "echo hi > /data/f; sleep 1000");
      await ok("run", "--rm", "--volumes-from", "donor", "busybox", "sh", "-c", "until [ -e /data/f ]; do sleep 0.1; done");
      expect((await ok("run", "--rm", "--volumes-from", "donor", "busybox", "sh", "-c", "cat /data/f; echo more > /data/g && echo written")).trim()).to.equal("hi\nwritten");
      const ro = await run("run", "--rm", "--volumes-from", "donor:ro", "busybox", "sh", "-c", "cat /data/f; echo y > /data/h");
      expect(ro.stdout.trim()).to.equal("hi");
      expect(ro.stderr).to.include("Read-only file system");
      await ok("create", "--name", "taker", "--volumes-from", "donor:ro", "busybox", "true");
      const [from, mounts] = (await ok("inspect", "-f", "{{json .HostConfig.VolumesFrom}}|{{json .Mounts}}", "taker")).trim().split("|");
      expect(JSON.parse(from)).to.deep.equal(["donor:ro"]);
      const donorMount = JSON.parse((await ok("inspect", "-f", "{{json .Mounts}}", "donor")).trim())[0];
      expect(JSON.parse(mounts)).to.deep.equal([{ ...donorMount, RW: false, Mode: "" }]);
      // a bind at the same destination replaces the inherited mount
      writeFileSync(join(work, "bound-marker"), "");
      expect(await ok("run", "--rm", "--volumes-from", "donor", "-v", `${work}:/data`, "busybox", "ls", "/data")).to.include("bound-marker");
    });

    it("--volumes-from of no container, or with a bad mode, is a 400 with Docker's message", async function () {
      await ok("create", "--name", "donor", "busybox", "true");
      expect(await fails("create", "--volumes-from", "nope", "busybox", "true")).to.include("No such container: nope");
      expect(await fails("create", "--volumes-from", "donor:zz", "busybox", "true")).to.include("invalid mode: zz");
    });

    it("--pid container: sees the other's processes; inspect shows the full id; a stopped or missing one is refused", async function () {
      const id = (await ok("run", "-d", "--name", "donor", "busybox", "sleep", "1000")).trim();
      const ps = await ok("run", "--rm", "--pid", "container:donor", "busybox", "ps", "-o", "pid,args");
      expect(ps).to.match(/^ +1 sleep 1000$/m);
      await ok("create", "--name", "joiner", "--pid", "container:donor", "busybox", "true");
      expect((await ok("inspect", "-f", "{{.HostConfig.PidMode}}", "joiner")).trim()).to.equal(`container:${id}`);
      const stopped = (await ok("create", "--name", "stopped", "busybox", "true")).trim();
      expect(await fails("run", "--rm", "--pid", "container:stopped", "busybox", "true")).to.include(`container ${stopped} is not running`);
      expect(await fails("create", "--pid", "container:nope", "busybox", "true")).to.include("No such container: nope");
    });

    it("--ipc container: shares a shareable container's /dev/shm and refuses a private one, in Docker's words (dockerode)", async function () {
      const donor = await sdk.createContainer({ Image: "busybox", Cmd: ["sh", "-c", "echo x > /dev/shm/s; sleep 1000"], HostConfig: { IpcMode: "shareable" } });
      await donor.start();
      const out = await ok("run", "--rm", "--ipc", `container:${donor.id}`, "busybox", "sh", "-c", "until [ -e /dev/shm/s ]; do sleep 0.1; done; ls /dev/shm; readlink /proc/self/ns/ipc");
      const [shm, ns] = out.trim().split("\n");
      expect(shm).to.equal("s");
      const donorNs = (await ok("exec", donor.id, "readlink", "/proc/self/ns/ipc")).trim();
      expect(ns).to.equal(donorNs);
      const priv = await sdk.createContainer({ Image: "busybox", Cmd: ["sleep", "1000"], HostConfig: { IpcMode: "private" } });
      await priv.start();
      const joiner = await sdk.createContainer({ Image: "busybox", Cmd: ["true"], HostConfig: { IpcMode: `container:${priv.id}` } });
      const err = await joiner.start().then(() => undefined, (e: { statusCode: number; json: { message: string } }) => e);
      expect(err?.statusCode).to.equal(500);
      expect(err?.json.message).to.equal(`can't join IPC of container ${priv.id}: non-shareable IPC (hint: use IpcMode:shareable for the donor container)`);
    });
  });

  describe("resources and annotations", function () {
    it("--oom-score-adj and --memory-swappiness reach the process and its cgroup", async function () {
      const out = await ok("run", "--rm", "--oom-score-adj", "345", "--memory-swappiness", "17", "busybox", "sh", "-c", "cat /proc/self/oom_score_adj; cat /sys/fs/cgroup/memory/memory.swappiness 2>/dev/null || echo v2");
      const [adj, swappiness] = out.trim().split("\n");
      expect(adj).to.equal("345");
      if (existsSync("/sys/fs/cgroup/memory/memory.swappiness")) expect(swappiness).to.equal("17");
      expect((await ok("run", "--rm", "busybox", "cat", "/proc/self/oom_score_adj")).trim()).to.equal("0");
    });

    it("out-of-range values are 400s with Docker's messages (CLI and dockerode)", async function () {
      expect(await fails("create", "--oom-score-adj", "1001", "busybox", "true")).to.include("Invalid value 1001, range for oom score adj is [-1000, 1000]");
      // (the CLI refuses 101 itself: dockerode sends it)
      if (existsSync("/sys/fs/cgroup/memory/memory.swappiness")) {
        const e = await sdk.createContainer({ Image: "busybox", Cmd: ["true"], HostConfig: { MemorySwappiness: 101 } }).then(() => undefined, (x: { statusCode: number; json: { message: string } }) => x);
        expect(e?.statusCode).to.equal(400);
        expect(e?.json.message).to.equal("Invalid value: 101, valid memory swappiness range is 0-100");
      }
      const err = await sdk.createContainer({ Image: "busybox", Cmd: ["true"], HostConfig: { OomScoreAdj: -1001 } }).then(() => undefined, (e: { statusCode: number; json: { message: string } }) => e);
      expect(err?.statusCode).to.equal(400);
      expect(err?.json.message).to.equal("Invalid value -1001, range for oom score adj is [-1000, 1000]");
      // -1 is the kernel's: recorded as null, as Docker does
      const c = await sdk.createContainer({ Image: "busybox", Cmd: ["true"], HostConfig: { MemorySwappiness: -1 } });
      expect((await c.inspect()).HostConfig.MemorySwappiness).to.equal(null);
    });

    it("refuses namespace modes Docker's daemon does not know, and a negative /dev/shm size, at create with its words (dockerode)", async function () {
      const refusal = (HostConfig: Record<string, unknown>) =>
        sdk.createContainer({ Image: "busybox", Cmd: ["true"], HostConfig }).then(
          () => "created",
          (e: { statusCode: number; json: { message: string } }) => `${e.statusCode} ${e.json.message}`,
        );
      expect(await refusal({ IpcMode: "bogus" })).to.equal("400 invalid IPC mode: bogus");
      expect(await refusal({ PidMode: "bogus" })).to.equal("400 invalid PID mode: bogus");
      expect(await refusal({ PidMode: "container:" })).to.equal("400 invalid PID mode: container:");
      expect(await refusal({ UTSMode: "private" })).to.equal("400 invalid UTS mode: private");
      expect(await refusal({ ShmSize: -1 })).to.equal("400 SHM size can not be less than 0");
      // (Docker's order: the IPC mode is looked at first)
      expect(await refusal({ IpcMode: "bogus", PidMode: "bogus" })).to.equal("400 invalid IPC mode: bogus");
    });

    it("--blkio-weight: applied where the kernel has blkio.weight, else dropped with Docker's warning", async function () {
      const r = await run("create", "--name", "weighted", "--blkio-weight", "300", "busybox", "true");
      expect(r.code, r.stderr).to.equal(0);
      const weight = (await ok("inspect", "-f", "{{.HostConfig.BlkioWeight}}", "weighted")).trim();
      if (existsSync("/sys/fs/cgroup/blkio/blkio.weight") || existsSync("/sys/fs/cgroup/io.weight")) {
        expect(weight).to.equal("300");
        expect(await fails("create", "--blkio-weight", "5", "busybox", "true")).to.include("Range of blkio weight is from 10 to 1000");
      } else {
        expect(r.stderr).to.include("Your kernel does not support Block I/O weight or the cgroup is not mounted. Weight discarded.");
        expect(weight).to.equal("0");
        await ok("start", "weighted");
      }
    });

    it("--annotation goes into the runtime's config.json over the labels, and inspect shows it", async function () {
      const id = (await ok("run", "-d", "--label", "a=label", "--annotation", "a=annotation", "--annotation", "org.test.b=c", "busybox", "sleep", "1000")).trim();
      const spec = JSON.parse(readFileSync(join(n.d.dir, "exec", "containers", id, "bundle", "config.json"), "utf8"));
      expect(spec.annotations).to.include({ a: "annotation", "org.test.b": "c" });
      expect(JSON.parse(await ok("inspect", "-f", "{{json .HostConfig.Annotations}}", id))).to.deep.equal({ a: "annotation", "org.test.b": "c" });
      const err = await sdk.createContainer({ Image: "busybox", Cmd: ["true"], HostConfig: { Annotations: { "": "x" } } as Docker.HostConfig }).then(() => undefined, (e: { statusCode: number; json: { message: string } }) => e);
      expect(err?.json.message).to.equal("invalid Annotations: the empty string is not permitted as an annotation key");
    });

    it("inspect shows the runtime in effect at create (the default's name when none was asked)", async function () {
      await ok("create", "--name", "plain", "busybox", "true");
      const def = (await ok("info", "-f", "{{.DefaultRuntime}}")).trim();
      expect((await ok("inspect", "-f", "{{.HostConfig.Runtime}}", "plain")).trim()).to.equal(def);
    });
  });

  describe("MAC addresses", function () {
    it("--mac-address on the default bridge and on a user network; inspect shows it", async function () {
      expect(await ok("run", "--rm", "--mac-address", "02:42:AC:11:00:99", "busybox", "ip", "link", "show", "eth0")).to.include("link/ether 02:42:ac:11:00:99 ");
      await ok("network", "create", "macnet");
      try {
        await ok("run", "-d", "--name", "mac1", "--network", "macnet", "--mac-address", "02:42:ac:11:00:98", "busybox", "sleep", "1000");
        expect(await ok("exec", "mac1", "ip", "link", "show", "eth0")).to.include("link/ether 02:42:ac:11:00:98 ");
        expect((await ok("inspect", "-f", "{{.NetworkSettings.Networks.macnet.MacAddress}}", "mac1")).trim()).to.equal("02:42:ac:11:00:98");
        await ok("rm", "-f", "mac1");
      } finally {
        await run("network", "rm", "macnet");
      }
    });

    it("the older Config.MacAddress (dockerode); a bad one fails the start; one with host networking is dropped with Docker's warning (refused before API 1.44)", async function () {
      const c = await sdk.createContainer({ Image: "busybox", Cmd: ["sleep", "1000"], MacAddress: "02:42:ac:11:00:95" } as Docker.ContainerCreateOptions);
      await c.start();
      expect(await ok("exec", c.id, "ip", "link", "show", "eth0")).to.include("link/ether 02:42:ac:11:00:95 ");
      const bad = await sdk.createContainer({ Image: "busybox", Cmd: ["true"], MacAddress: "zz" } as Docker.ContainerCreateOptions);
      const err = await bad.start().then(() => undefined, (e: { statusCode: number; json: { message: string } }) => e);
      expect(err?.statusCode).to.equal(500);
      expect(err?.json.message).to.equal("address zz: invalid MAC address");
      const onHost = { Image: "busybox", Cmd: ["true"], MacAddress: "02:42:ac:11:00:95", HostConfig: { NetworkMode: "host" } };
      const created = await httpRequest({ socketPath: n.d.socket }, "POST", "/v1.51/containers/create", onHost);
      expect(created.status, created.body).to.equal(201);
      expect(JSON.parse(created.body).Warnings).to.deep.equal(["The container-wide MacAddress field is now deprecated. It should be specified in EndpointsConfig instead."]);
      const older = await httpRequest({ socketPath: n.d.socket }, "POST", "/v1.43/containers/create", onHost);
      expect([older.status, JSON.parse(older.body).message]).to.deep.equal([400, "conflicting options: mac-address and the network mode"]);
    });
  });
});
