/**
 * Every flag of `run` and `create`, through `bin/engine` and through the Docker CLI against one
 * engined (in a network namespace of its own) behind a logging proxy: for each command line the
 * two create requests must be equal (path, query and body; the Env entries sorted, since the
 * Docker CLI sends `-e` through a Go map), and for each bad value the exit status and stderr
 * (the program's name made alike). Then runs that show the daemon applies the fields. A check
 * of its own keeps the command lines covering every flag `docker run --help` lists.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { normalized } from "./helpers/cli-compare.js";
import { docker } from "./helpers/docker-cli.js";
import { engine, engineInPty, inPty } from "./helpers/engine-cli.js";
import { makeTempDir, type RunResult } from "./helpers/engined.js";
import { eventually, startNetDaemon, type NetDaemon } from "./helpers/net-daemon.js";
import { startRequestLog, type LoggedRequest, type RequestLog } from "./helpers/request-log.js";

/** Command lines whose create requests must be equal; `@` is the test's folder. */
const SAME_REQUEST: string[] = [
  "create --device /dev/null:/dev/mynull:rw --device /dev/zero --device /dev/null:r --device vendor.com/class=x --device-cgroup-rule c~1:3~rwm --gpus all --gpus 2,device=1 busybox true",
  `create --gpus "device=1,2",capabilities=utility,driver=nvidia --gpus options=a=b,count=all busybox true`,
  "create --group-add 10 --group-add audio --domainname example.org --label-file @/labels.list -l x=y busybox true",
  "create --security-opt no-new-privileges --security-opt label=disable --security-opt seccomp=@/profile.json --security-opt systempaths=unconfined --userns host --cgroupns private busybox true",
  "create --security-opt seccomp:unconfined --security-opt apparmor=unconfined busybox true",
  "create --dns 1.1.1.1 --dns ~2001:DB8::1~ --dns-search example.com --dns-search ~b.example.~ --dns-option ndots:2 --dns-opt rotate busybox true",
  "create --ip 172.17.0.50 --ip6 2001:db8::33 --link-local-ip 169.254.1.1 --mac-address 92:d0:c6:0a:29:33 -P --expose 80 busybox true",
  "create --volume-driver local --storage-opt size=1G --mount type=tmpfs,dst=/t,tmpfs-size=1m,tmpfs-mode=1777 --mount type=volume,src=v1,dst=/v,volume-nocopy,volume-label=a=b,volume-opt=o=1,volume-driver=local busybox true",
  "create --mount type=bind,src=.,dst=/x,bind-propagation=RSHARED,consistency=cached,ro --mount TYPE=bind,src=/tmp,dst=/y,bind-recursive=writable,readonly=t busybox true",
  "create --health-cmd true --health-interval 1s --health-retries 3 --health-timeout 2s --health-start-period 3s --health-start-interval 500ms busybox true",
  "create --no-healthcheck busybox true",
  "create --health-timeout 1m30s busybox true",
  "create --blkio-weight 300 --blkio-weight-device /dev/vda:200 --cpuset-cpus 0 --cpuset-mems 0 --cpu-period 100000 --cpu-quota 50000 --cpu-rt-period 1000 --cpu-rt-runtime 500 -c 512 busybox true",
  "create --device-read-bps /dev/vda:1mb --device-read-iops /dev/vda:100 --device-write-bps /dev/vda:2mb --device-write-iops /dev/vda:200 --kernel-memory 10m --memory-reservation 32m --memory-swap 128m -m 64m --memory-swappiness 50 busybox true",
  "create --oom-kill-disable --oom-score-adj 100 --cgroup-parent foo --ipc shareable --isolation default --pid host --uts host --sysctl net.ipv4.ip_forward=1 --sysctl kernel.shm_rmid_forced=1 --annotation a=b --annotation c busybox true",
  "create --platform linux/amd64 --disable-content-trust --stop-signal SIGUSR1 --stop-timeout 3 --ulimit nofile=10:20 --ulimit core=1 --ulimit nofile=30 busybox true",
  "create --platform Linux/X86_64 --cidfile @/new.cid -e A=1 -e B=2 -e A=3 -e FROM_CLIENT -e UNSET busybox true",
  "create --network net1 --network-alias a1 --net-alias a2 --ip 10.99.0.9 --mac-address 02:42:ac:11:00:99 --link peer:p busybox true",
  "create --network name=net1,alias=x,alias=y,ip=10.99.0.10,driver-opt=k=v,gw-priority=5 --network name=net2,link-local-ip=169.254.0.5,mac-address=02:42:ac:11:00:98 busybox true",
  "create --net net1 --link peer busybox true",
  "create --network bridge --link peer:p --add-host h1:1.2.3.4 --add-host h2=::1 busybox true",
  "create --network container:peer busybox true",
  "create -p published=8080,target=80 -p target=81,protocol=udp -p 127.0.0.1:9000:9000 busybox true",
  "create --volumes-from peer:ro --tmpfs /run:size=1m --tmpfs /x -v /anon --volume-driver local busybox true",
  "create --pid container:peer --ipc container:peer busybox true",
  "create --read-only --privileged --init --runtime runc --shm-size 1m --pids-limit 10 -h box -u 1:1 -w /tmp --entrypoint= -t -i busybox true",
  "create --use-api-socket --env-file @/env.list busybox true",
  "create --use-api-socket -e DOCKER_CONFIG=/x --log-driver json-file --log-opt max-size=1m --restart on-failure:2 busybox true",
  "create --cap-add net_admin --cap-add ~sys_time~ --cap-add CAP_CHOWN --cap-add all --cap-drop chown --cap-drop MKNOD --cap-drop mknod --name rf-named -q busybox true",
  "run -d --rm --detach-keys ctrl-x --sig-proxy=false --rm busybox true",
  "run -d --rm --cpus 0.5 busybox true",
];

/** Bad values (and a few that only warn): the same exit status and stderr as the Docker CLI's. */
const SAME_FAILURE: string[] = [
  "--blkio-weight x", "--blkio-weight 70000", "--blkio-weight -1", "--blkio-weight-device /dev/vda", "--blkio-weight-device foo:1",
  "--blkio-weight-device /dev/vda:x", "--blkio-weight-device /dev/vda:5", "--device-read-bps /dev/vda:x", "--device-read-bps foo:1",
  "--device-write-bps /dev/vda:-1", "--device-read-iops /dev/vda:x", "--device-write-iops /dev/vda:1.5", "-c x", "--cpu-period x",
  "--cpu-quota x", "--cpu-rt-period x", "--cpu-rt-runtime 1.5", "--memory-swap x", "--memory-swappiness 101",
  "--memory-swappiness x", "--memory-reservation x", "--kernel-memory x", "--oom-score-adj x", "--oom-score-adj 2000",
  "--health-interval x", "--health-interval -1s", "--health-timeout -1s", "--health-start-period -2s", "--health-start-interval -1ms",
  "--health-retries -1", "--health-retries x", "--no-healthcheck --health-cmd x", "--health-interval 5", "--health-interval 1x",
  "--device ''", "--device a:b:c:d", "--device /dev/null:rel", "--device /dev/null:/x:bad", "--device rel", "--device-cgroup-rule bad",
  "--gpus foo", "--gpus count=x", "--gpus driver=a,driver=b", "--gpus bogus=1", "--gpus ''", `--gpus 'options="a'`, "--gpus all",
  "--sysctl kernel.foo=1", "--sysctl foo", "--sysctl =1", "--dns x", "--dns 127.0.0.1", "--dns ::1", "--dns-search -bad",
  "--mac-address x", "--pid bad", "--pid container:", "--uts bad", "--userns bad", "--cgroupns bad", "--security-opt foo",
  "--security-opt seccomp=/nonexistent", "--security-opt seccomp=@/bad-profile.json", "--security-opt apparmor:", "--storage-opt foo",
  "--label-file /nonexistent", "--label-file @/spaces.list", "--label-file @/bad-utf8.list", "--env-file @/spaces.list",
  "--cidfile @/exists.cid", "--cidfile /nonexistent/x.cid", "--platform linux/amd64/v2/extra", "--platform 'a b'", "--platform linux/",
  "--platform 'linux/*'", "--platform bogus", "--platform a/b/c/d/e", "--network-alias x --network none", "--network-alias x",
  "--link a:b:c", "--stop-timeout x", "--io-maxiops 5", "--io-maxbandwidth 5m", "--cpu-count 1 --cpu-percent 5", "--annotation =x",
  "--network net1 --network bridge", "--network net1 --network net1", "--network bogus=1", "--network alias=x", "--network 'name=net1,alias'",
  "--network name=net1,alias=x --network-alias y", "--network name=net1,ip=10.99.0.10 --ip 10.99.0.11",
  "--network name=net1,ip6=fd00:98::1 --ip6 fd00:98::2", "--network name=net1,mac-address=02:42:ac:11:00:98 --mac-address 02:42:ac:11:00:99",
  "--network name=net1,link-local-ip=169.254.0.5 --link-local-ip 169.254.0.6", "--network ''", "--network 'name=net1,gw-priority=x'",
  "--network a=b", "--network 'name=net1,driver-opt=x'", "--network 'name=net1,mac-address=zz'", "--mount foo", "--mount ''",
  "--mount type=volume,target=/x,bogus=1", "--mount type=tmpfs,target=/x,volume-nocopy", "--mount type=volume,target=/x,image-subpath=/bin",
  "--mount type=tmpfs,dst=/x,tmpfs-mode=888", "--mount type=volume", "--mount 'type=bind,src=/tmp,dst=/x,bind-recursive=foo'",
  "-p published=80,bogus", "--expose 80:90", "--isolation hyperv", "--security-opt foo=bar", "--security-opt no-new-privileges=maybe",
  "--platform linux/arm64", "--use-api-socket --cidfile @/exists.cid", "--disable-content-trust=maybe", "--publish-all=maybe", "-d -a stdout",
  "--mount type=bind,src=/tmp,dst=/x,bind-nonrecursive=true",
];

/** Splits a command line as a shell would for these simple ones: `'...'` keeps spaces, `~` stands for a space in a value. */
function words(line: string, work: string): string[] {
  return [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => (m[1] ?? m[2].replaceAll("~", " ")).replaceAll("@", work));
}

/** The create requests of one run through the proxy, made comparable. */
function creates(requests: LoggedRequest[]): unknown[] {
  return requests
    .filter((r) => r.method === "POST" && r.path.startsWith("/containers/create"))
    .map((r) => {
      const body = structuredClone(r.json) as { Env?: string[] | null };
      if (Array.isArray(body.Env)) body.Env.sort();
      return { path: r.path, body };
    });
}

describe("engine run/create: every flag of the Docker CLI's, mapped as it maps them", function () {
  this.timeout(600_000);
  let n: NetDaemon;
  let log: RequestLog;
  let work: string;
  const proxied = () => `unix://${log.socket}`;
  const ok = (...args: string[]) => n.cli(...args);
  const env = { FROM_CLIENT: "from-client" };

  before(async function () {
    n = await startNetDaemon();
    work = makeTempDir("engine-run-flags-");
    writeFileSync(join(work, "labels.list"), "\ufeffBOM=1\n  # comment\n  K1=v 1 \nK2\n\tK3= x\n");
    writeFileSync(join(work, "env.list"), "E1=1\nFROM_CLIENT\nNOT_SET\n");
    writeFileSync(join(work, "spaces.list"), "a b=1\n");
    writeFileSync(join(work, "bad-utf8.list"), Buffer.from([0x58, 0x3d, 0xff, 0x0a]));
    writeFileSync(join(work, "profile.json"), '{"defaultAction": "SCMP_ACT_ALLOW",\n "syscalls": [ ], "x": "\\u00e9 é", "n": 1.50e3}');
    writeFileSync(join(work, "bad-profile.json"), "{bad");
    writeFileSync(join(work, "exists.cid"), "");
    await ok("network", "create", "--subnet", "10.99.0.0/24", "net1");
    await ok("network", "create", "--ipv6", "--subnet", "10.98.0.0/24", "--subnet", "fd00:98::/64", "net2");
    await ok("run", "-d", "--name", "peer", "busybox", "sleep", "600");
    log = await startRequestLog(n.d.socket, join(work, "proxy.sock"));
  });
  after(async function () {
    await log?.close();
    await n?.stop();
  });

  /** Runs `args` with a client through the proxy; removes what it created (for the other client to start alike). */
  const through = async (client: typeof engine | typeof docker, args: string[]): Promise<{ result: RunResult; requests: LoggedRequest[] }> => {
    const result = client === engine ? await engine(proxied(), args, { env }) : await docker(proxied(), args, env);
    const requests = log.take();
    const id = /^[0-9a-f]{64}$/m.exec(result.stdout)?.[0];
    if (id) await docker(n.host, ["rm", "-f", id]);
    rmSync(join(work, "new.cid"), { force: true });
    return { result, requests };
  };

  it("lists every flag of docker run and docker create, and these tests use each", async function () {
    const names = (help: string) => [...help.matchAll(/^\s+(?:-\w, )?--([\w-]+)/gm)].map((m) => m[1]).sort();
    // (against a Linux daemon the Docker CLI leaves the Windows-only flags out of its help; the failure cases use them)
    for (const cmd of ["run", "create"]) {
      const theirs = names((await docker(n.host, [cmd, "--help"])).stdout);
      const ours = names((await engine(n.host, [cmd, "--help"])).stdout);
      expect(ours, `${cmd} --help`).to.deep.equal(theirs.filter((f) => f !== "help"));
    }
    // (every line is run with --pull never)
    const used = new Set(["pull", ...[...SAME_REQUEST, ...SAME_FAILURE].flatMap((l) => [...l.matchAll(/(?:^|\s)--([\w-]+)/g)].map((m) => m[1]))]);
    const short: Record<string, string> = { c: "cpu-shares", P: "publish-all", p: "publish", e: "env", l: "label", a: "attach", d: "detach", h: "hostname", u: "user", w: "workdir", t: "tty", i: "interactive", q: "quiet", m: "memory", v: "volume" };
    for (const l of [...SAME_REQUEST, ...SAME_FAILURE]) for (const m of l.matchAll(/(?:^|\s)-(\w)\b/g)) if (short[m[1]]) used.add(short[m[1]]);
    const all = [...names((await docker(n.host, ["run", "--help"])).stdout).filter((f) => f !== "help"), "cpu-count", "cpu-percent", "io-maxbandwidth", "io-maxiops"];
    expect(all.filter((f) => !used.has(f)), "flags no test line uses").to.deep.equal([]);
  });

  it("sends the Docker CLI's create request for each command line", async function () {
    for (const line of SAME_REQUEST) {
      const args = words(line.replace(/^(create|run)/, "$1 --pull never"), work);
      const ours = await through(engine, args);
      const theirs = await through(docker, args);
      expect(ours.result.code, `engine ${line}: ${ours.result.stderr}`).to.equal(theirs.result.code);
      expect(creates(ours.requests), line).to.deep.equal(creates(theirs.requests));
      expect(creates(ours.requests), line).to.have.length.greaterThan(0);
    }
  });

  it("sends the terminal's size when stdout is a terminal, with -t or without", async function () {
    for (const tty of [[], ["-t"]]) {
      const args = ["-H", proxied(), "create", "--pull", "never", ...tty, "busybox", "true"];
      const config = makeTempDir("engine-run-flags-pty-");
      expect((await engineInPty(proxied(), args.slice(2), { rows: 30, cols: 100, configDir: config })).code).to.equal(0);
      const ours = creates(log.take());
      expect((await inPty(["docker", ...args], { rows: 30, cols: 100, env: { DOCKER_CONFIG: config } })).code).to.equal(0);
      const theirs = creates(log.take());
      expect(ours).to.deep.equal(theirs);
      expect((ours[0] as { body: { HostConfig: { ConsoleSize: number[] } } }).body.HostConfig.ConsoleSize).to.deep.equal([30, 100]);
    }
  });

  it("fails as the Docker CLI does for bad values: same status, same message", async function () {
    for (const command of ["create", "run"]) {
      for (const bad of SAME_FAILURE) {
        const args = [command, "--pull", "never", ...words(bad, work), "busybox", "true"];
        const ours = (await through(engine, args)).result;
        const theirs = (await through(docker, args)).result;
        const [a, b] = [normalized(ours, stripTimes), normalized(theirs, stripTimes)];
        expect(a, `engine ${args.join(" ")}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`).to.deep.equal(b);
      }
    }
  });

  it("with an older API version agreed: the Docker CLI's refusals and its request for that version", async function () {
    const pinned = async (version: string, args: string[]) => {
      const ours = await engine(proxied(), args, { env: { ENGINE_API_VERSION: version } });
      const oursSent = creates(log.take());
      const theirs = await docker(proxied(), args, { DOCKER_API_VERSION: version });
      const theirsSent = creates(log.take());
      for (const id of [ours, theirs].map((r) => /^[0-9a-f]{64}$/m.exec(r.stdout)?.[0]).filter(Boolean)) await docker(n.host, ["rm", "-f", id!]);
      expect(normalized(ours), `${version}: ${args.join(" ")}`).to.deep.equal(normalized(theirs));
      expect(oursSent, `${version}: ${args.join(" ")}`).to.deep.equal(theirsSent);
    };
    for (const command of ["create", "run"]) {
      await pinned("1.43", [command, "--pull", "never", "--mac-address", "02:42:ac:11:00:99", "busybox", "true"]);
      await pinned("1.24", [command, "--pull", "never", "--cgroupns", "host", "--stop-timeout", "2", "--init", "busybox", "true"]);
    }
    await pinned("1.41", ["create", "--pull", "never", "--kernel-memory", "10m", "--platform", "linux/amd64", "--rm", "busybox", "true"]);
    await pinned("1.40", ["create", "--pull", "never", "--kernel-memory", "10m", "--platform", "linux/amd64", "busybox", "true"]);
  });

  it("writes --cidfile and refuses an existing one; --use-api-socket gives the socket and the credentials", async function () {
    const cid = join(work, "run.cid");
    const r = await engine(n.host, ["run", "--rm", "--cidfile", cid, "busybox", "true"]);
    expect(r.code, r.stderr).to.equal(0);
    expect(readFileSync(cid, "utf8")).to.match(/^[0-9a-f]{64}$/);
    const again = await engine(n.host, ["run", "--rm", "--cidfile", cid, "busybox", "true"]);
    expect(again).to.include({ code: 125 });
    expect(again.stderr).to.include(`container ID file found, make sure the other container isn't running or delete ${cid}`);
    rmSync(cid);
    // a create that fails takes the file away again
    expect((await engine(n.host, ["create", "--cidfile", cid, "--pull", "never", "nosuch-image"])).code).to.equal(1);
    expect(existsSync(cid)).to.equal(false);

    const config = makeTempDir("engine-run-flags-config-");
    writeFileSync(join(config, "config.json"), JSON.stringify({ auths: { "127.0.0.1:5000": { auth: Buffer.from("u:p").toString("base64") } } }));
    const inside = await engine(n.host, ["run", "--rm", "--use-api-socket", "busybox", "sh", "-c", "test -S /var/run/docker.sock && cat $DOCKER_CONFIG/config.json"], { configDir: config });
    expect(inside.code, inside.stderr).to.equal(0);
    expect(JSON.parse(inside.stdout)).to.deep.equal({ auths: { "127.0.0.1:5000": { auth: Buffer.from("u:p").toString("base64") } } });
  });

  it("refuses --disable-content-trust=false (it verifies no signature) and creates nothing; =true runs", async function () {
    const before = (await ok("ps", "-aq")).trim();
    for (const cmd of [["run", "--rm"], ["create"]]) {
      const r = await engine(n.host, [...cmd, "--disable-content-trust=false", "busybox", "true"]);
      expect(r.code, r.stderr).to.equal(1);
      expect(r.stderr).to.include("content trust (image signature verification) is not supported by this client");
    }
    expect((await ok("ps", "-aq")).trim()).to.equal(before);
    const trusted = await engine(n.host, ["run", "--rm", "--disable-content-trust", "busybox", "true"]);
    expect(trusted.code, trusted.stderr).to.equal(0);
  });

  it("the daemon applies the fields: sysctls, groups, cpusets, devices, DNS, namespaces, OOM score, mounts", async function () {
    const run = async (flags: string[], script: string) => {
      const r = await engine(n.host, ["run", "--rm", ...flags, "busybox", "sh", "-c", script]);
      expect(r.code, `${flags.join(" ")}: ${r.stderr}`).to.equal(0);
      return r.stdout.trim();
    };
    expect(await run(["--sysctl", "net.ipv4.ip_forward=1"], "cat /proc/sys/net/ipv4/ip_forward")).to.equal("1");
    expect((await run(["--group-add", "1234", "--group-add", "2345", "-u", "1000"], "id -G")).split(" ")).to.include.members(["1234", "2345"]);
    expect(await run(["--cpuset-cpus", "0"], "grep Cpus_allowed_list /proc/self/status")).to.match(/:\s*0$/);
    expect(await run(["--device", "/dev/null:/dev/mynull:rw"], "echo x > /dev/mynull && ls -l /dev/mynull")).to.match(/^crw/);
    // (the spec carries the domain name too; runc 1.1 does not set it in the UTS namespace)
    expect(await run(["--domainname", "example.org", "-h", "box"], "grep -c 'box.example.org box' /etc/hosts")).to.equal("1");
    const resolv = await run(["--dns", "10.0.0.1", "--dns-search", "example.com", "--dns-option", "ndots:3"], "cat /etc/resolv.conf");
    expect(resolv).to.match(/^search example\.com$/m).and.match(/^options ndots:3$/m).and.match(/^nameserver 10\.0\.0\.1$/m);
    expect(await run(["--oom-score-adj", "100"], "cat /proc/self/oom_score_adj")).to.equal("100");
    expect(await run(["--pid", "host"], "cat /proc/1/comm")).to.not.equal("sh");
    expect(await run(["--mount", "type=tmpfs,dst=/t,tmpfs-size=1m"], "grep ' /t ' /proc/mounts")).to.match(/^tmpfs \/t tmpfs .*size=1024k/);
    expect(await run(["--network", "net1", "--ip", "10.99.0.77", "--mac-address", "02:42:ac:11:00:77"], "ip -o addr show eth0; cat /sys/class/net/eth0/address")).to.include("10.99.0.77/24").and.include("02:42:ac:11:00:77");
    expect(await run(["--security-opt", "systempaths=unconfined"], "cat /proc/timer_list >/dev/null && echo readable")).to.equal("readable");
    expect(await run(["--security-opt", "writable-cgroups=true"], "grep -m1 ' /sys/fs/cgroup/[a-z]' /proc/mounts")).to.match(/ cgroup rw,/);
    expect(await run([], "grep -m1 ' /sys/fs/cgroup/[a-z]' /proc/mounts")).to.match(/ cgroup ro,/);
  });

  it("the daemon applies the per-device block IO limits (or drops them with Docker's warning)", async function () {
    // a block device of this host, by its numbers (loop devices are there on most)
    const name = readdirSync("/sys/block").find((b) => existsSync(`/dev/${b}`) && statSync(`/dev/${b}`).isBlockDevice());
    if (!name) this.skip();
    const numbers = readFileSync(`/sys/block/${name}/dev`, "utf8").trim();
    const dev = `/dev/${name}`;
    const v2 = existsSync("/sys/fs/cgroup/cgroup.controllers");
    const files = v2 ? "/sys/fs/cgroup/io.max" : "/sys/fs/cgroup/blkio/blkio.throttle.read_bps_device /sys/fs/cgroup/blkio/blkio.throttle.write_iops_device";
    const r = await engine(n.host, ["run", "--rm", "--device-read-bps", `${dev}:1mb`, "--device-write-iops", `${dev}:50`, "busybox", "sh", "-c", `cat ${files}`]);
    const supported = v2 ? readFileSync("/sys/fs/cgroup/cgroup.controllers", "utf8").split(/\s+/).includes("io") : existsSync("/sys/fs/cgroup/blkio/blkio.throttle.read_bps_device");
    if (!supported) {
      expect(r.stderr).to.include("WARNING: Your kernel does not support BPS Block I/O read limit or the cgroup is not mounted. Block I/O BPS read limit discarded.");
      return;
    }
    expect(r.code, r.stderr).to.equal(0);
    if (v2) expect(r.stdout).to.include(`${numbers} rbps=1048576 wbps=max riops=max wiops=50`);
    else expect(r.stdout).to.equal(`${numbers} 1048576\n${numbers} 50\n`);
    // a path that is no device fails the start
    const missing = await engine(n.host, ["run", "--rm", "--device-read-bps", "/dev/nosuch-device:1mb", "busybox", "true"]);
    expect(missing.stderr).to.include("stat /dev/nosuch-device: no such file or directory");
  });

  it("the daemon refuses an image of another platform, an isolation Linux lacks, an unknown security option, a cpuset the host lacks", async function () {
    const refused = async (flags: string[], message: string) => {
      const r = await engine(n.host, ["create", "--pull", "never", ...flags, "busybox", "true"]);
      expect(r.code, flags.join(" ")).to.equal(1);
      expect(r.stderr, flags.join(" ")).to.include(message);
    };
    const arch = (await ok("image", "inspect", "--format", "{{.Os}}/{{.Architecture}}", "busybox")).trim();
    await refused(["--platform", arch === "linux/arm64" ? "linux/amd64" : "linux/arm64"], `image with reference busybox was found but does not match the specified platform`);
    expect((await engine(n.host, ["create", "--pull", "never", "--platform", arch, "busybox", "true"])).code).to.equal(0);
    await refused(["--isolation", "hyperv"], `Invalid isolation: "hyperv" - linux only supports 'default'`);
    await refused(["--security-opt", "foo=bar"], `invalid --security-opt 2: "foo=bar"`);
    await refused(["--cpu-rt-period", "1000", "--cpu-rt-runtime", "2000"], "cpu real-time runtime cannot be higher than cpu real-time period");
    // cpusets: the form, and the host's own cpus and nodes (as dockerd 20.10 words both, at create and update)
    await refused(["--cpuset-cpus", "3-1"], "Invalid value 3-1 for cpuset cpus: invalid format: 3-1");
    await refused(["--cpuset-mems", "x"], "Invalid value x for cpuset mems: invalid format: x");
    const cpus = readFileSync(existsSync("/sys/fs/cgroup/cpuset/cpuset.cpus") ? "/sys/fs/cgroup/cpuset/cpuset.cpus" : "/sys/fs/cgroup/cpuset.cpus.effective", "utf8").trim();
    const beyond = String(Math.max(...cpus.split(/[,-]/).map(Number)) + 1);
    await refused(["--cpuset-cpus", beyond], `Requested CPUs are not available - requested ${beyond}, available: ${cpus}`);
    const id = (await ok("create", "--pull", "never", "--cpuset-cpus", cpus, "busybox", "true")).trim();
    const update = await engine(n.host, ["update", "--cpuset-cpus", beyond, id]);
    expect(update.code).to.equal(1);
    expect(update.stderr).to.include(`Requested CPUs are not available - requested ${beyond}, available: ${cpus}`);
    await ok("rm", id);
  });

  it("the real-time budget goes to the runtime, which the kernel refuses without a budget above (cgroup v1), or is refused where the kernel has none", async function () {
    const flags = ["--cpu-rt-period", "1000000", "--cpu-rt-runtime", "10000"];
    if (!existsSync("/sys/fs/cgroup/cpu/cpu.rt_period_us")) {
      const r = await engine(n.host, ["create", "--pull", "never", ...flags, "busybox", "true"]);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.include("kernel does not support CPU real-time scheduler");
      return;
    }
    // The runtime writes the budget into the container's cgroup, and the kernel refuses it: the
    // cgroups above it have no real-time budget to give (dockerd gives its own with
    // --cpu-rt-runtime, which engined does not have), so the start fails as Docker's does there.
    const r = await engine(n.host, ["run", "--rm", ...flags, "busybox", "true"]);
    expect(r.code).to.equal(125);
    expect(r.stderr).to.match(/failed to write \\?"10000\\?": write \/sys\/fs\/cgroup\/cpu\/\S+\/cpu\.rt_runtime_us/);
  });

  it("health flags reach the health monitor; inspect shows them", async function () {
    const id = (await ok("run", "-d", "--health-cmd", "test -e /tmp/ok", "--health-interval", "200ms", "--health-retries", "2", "--health-start-period", "1s", "busybox", "sh", "-c", "touch /tmp/ok; sleep 60")).trim();
    const r = await engine(n.host, ["inspect", "--format", "{{json .Config.Healthcheck}}", id]);
    expect(JSON.parse(r.stdout)).to.deep.equal({ Test: ["CMD-SHELL", "test -e /tmp/ok"], Interval: 200_000_000, StartPeriod: 1_000_000_000, Retries: 2 });
    await eventually("the container to be healthy", async () => (await ok("inspect", "--format", "{{.State.Health.Status}}", id)).trim() === "healthy", 20_000);
    await ok("rm", "-f", id);
  });
});

/** logrus' time stamp (`time="2026-..."`) differs between two runs. */
const stripTimes = (t: string) => t.replace(/time="[^"]*"/g, 'time="T"');
