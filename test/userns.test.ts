/**
 * `--userns-remap` and `--rootless` against a real engined, with the real Docker CLI.
 *
 * The remapping daemon runs in a network namespace of its own with its default bridge, so that
 * both kinds of container network are seen: the bridge (a network namespace the daemon makes,
 * owned by the container's user namespace) and `none` (both made by runc). It uses
 * `--userns-remap=default`, which makes the user `engine-remap` with ranges in /etc/subuid and
 * /etc/subgid when it is missing; the account files are restored afterwards
 * (helpers/host-accounts.ts). The rootless tests check the refusals and the defaults: nothing
 * here runs a container rootless (see docs/rootless.md).
 */
import "./helpers/root-hooks.js";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { expect } from "chai";
import { extract } from "tar-stream";
import { docker } from "./helpers/docker-cli.js";
import { ENGINED, makeTempDir, runCommand, runEngined, type RunResult } from "./helpers/engined.js";
import { restoreAccounts, snapshotAccounts, subordinateStart, type AccountsSnapshot } from "./helpers/host-accounts.js";
import { startNetDaemon, type NetDaemon } from "./helpers/net-daemon.js";

const REMAP_USER = "engine-remap";

/** Owners of a tar's entries: name -> "uid:gid". */
async function tarOwners(tar: Buffer): Promise<Map<string, string>> {
  const ex = extract();
  Readable.from([tar]).pipe(ex as unknown as NodeJS.WritableStream);
  const out = new Map<string, string>();
  for await (const entry of ex) {
    out.set(entry.header.name.replace(/^\.\//, "").replace(/\/$/, ""), `${entry.header.uid}:${entry.header.gid}`);
    for await (const _ of entry);
  }
  return out;
}

/** `Uid:` and `Gid:` of a process as the host sees it (real, effective, saved, fs). */
function hostIds(pid: number): { uid: string; gid: string } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return { uid: /^Uid:\s+(.*)$/m.exec(status)![1].trim(), gid: /^Gid:\s+(.*)$/m.exec(status)![1].trim() };
}

const owner = (path: string) => {
  const st = statSync(path);
  return `${st.uid}:${st.gid}`;
};

describe("userns-remap: a daemon with --userns-remap=default", function () {
  this.timeout(120_000);

  let accounts: AccountsSnapshot;
  let nd: NetDaemon;
  let work: string;
  let uidStart: number;
  let gidStart: number;
  const remappedRoot = () => join(work, "data", `${uidStart}.${gidStart}`);
  const dk = (...args: string[]): Promise<RunResult> => docker(nd.host, args);
  const ok = async (args: string[], input?: string): Promise<string> => {
    const r = await docker(nd.host, args, {}, input === undefined ? {} : { input });
    expect(r.code, `docker ${args.join(" ")}:\n${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  const refused = async (args: string[]): Promise<string> => {
    const r = await dk(...args);
    expect(r.code, r.stdout).to.not.equal(0);
    return r.stderr;
  };

  before(async function () {
    accounts = snapshotAccounts(REMAP_USER);
    work = makeTempDir("engine-userns-");
    chmodSync(work, 0o711); // the remapped root passes through the roots' parent
    nd = await startNetDaemon(["--userns-remap=default"], { roots: work });
    uidStart = subordinateStart("/etc/subuid", REMAP_USER);
    gidStart = subordinateStart("/etc/subgid", REMAP_USER);
  });

  after(async function () {
    await nd?.stop();
    if (accounts) restoreAccounts(accounts);
  });

  it("makes the user engine-remap with a range of 65536 ids in /etc/subuid and /etc/subgid", () => {
    const passwd = execFileSync("getent", ["passwd", REMAP_USER], { encoding: "utf8" }).trim().split(":");
    expect(passwd[6]).to.equal("/bin/false");
    execFileSync("getent", ["group", REMAP_USER]);
    for (const file of ["/etc/subuid", "/etc/subgid"]) {
      const line = readFileSync(file, "utf8").split("\n").find((l) => l.startsWith(`${REMAP_USER}:`))!;
      expect(Number(line.split(":")[2])).to.equal(65536);
      expect(Number(line.split(":")[1])).to.be.at.least(100000);
    }
    expect(nd.d.output()).to.include(`ID ranges will be mapped to subuid/subgid ranges of: ${REMAP_USER}:${REMAP_USER}`);
  });

  it("keeps its state in <data-root>/<uid>.<gid>, shows it and name=userns in /info", async () => {
    expect(readdirSync(join(work, "data"))).to.deep.equal([`${uidStart}.${gidStart}`]);
    expect(statSync(remappedRoot()).mode & 0o777).to.equal(0o710);
    expect(owner(remappedRoot())).to.equal(`0:${gidStart}`);
    // the data root above it too, as Docker has it: the remapped root passes by its group, nobody else
    expect(statSync(join(work, "data")).mode & 0o777).to.equal(0o710);
    expect(owner(join(work, "data"))).to.equal(`0:${gidStart}`);
    const info = JSON.parse(await ok(["info", "--format", "{{json .}}"]));
    expect(info.DockerRootDir).to.equal(remappedRoot());
    expect(info.SecurityOptions).to.include("name=userns");
  });

  it("runs container root as the first subordinate id on the host", async () => {
    const id = (await ok(["run", "-d", "busybox", "sleep", "60"])).trim();
    try {
      expect((await ok(["exec", id, "id", "-u"])).trim()).to.equal("0");
      expect((await ok(["exec", id, "cat", "/proc/self/uid_map"])).trim().split(/\s+/)).to.deep.equal(["0", String(uidStart), "65536"]);
      expect((await ok(["exec", id, "cat", "/proc/self/gid_map"])).trim().split(/\s+/)).to.deep.equal(["0", String(gidStart), "65536"]);
      const pid = Number((await ok(["inspect", "-f", "{{.State.Pid}}", id])).trim());
      const ids = hostIds(pid);
      expect(ids.uid.split(/\s+/)).to.deep.equal(Array(4).fill(String(uidStart)));
      expect(ids.gid.split(/\s+/)).to.deep.equal(Array(4).fill(String(gidStart)));
    } finally {
      await dk("rm", "-f", id);
    }
  });

  it("gives a bridged container a network namespace its user namespace owns (so sysfs mounts), and none a fresh pair", async () => {
    const out = await ok(["run", "--rm", "busybox", "sh", "-c", "ip -4 addr show eth0; ls /sys/class/net; grep ' /sys ' /proc/mounts"]);
    expect(out).to.match(/inet 172\.\d+\.\d+\.\d+\//);
    expect(out).to.include("sysfs /sys sysfs");
    const none = await ok(["run", "--rm", "--net", "none", "busybox", "sh", "-c", "ls /sys/class/net; cat /proc/self/uid_map"]);
    expect(none.split(/\s+/)).to.include.members(["lo", "0", String(uidStart), "65536"]);
    expect(none).to.not.include("eth0");
    expect(readdirSync(join(work, "exec", "userns"))).to.deep.equal([]); // released with the container
  });

  it("lands what the container writes on the host with shifted owners: its layer, a bind, a named volume", async () => {
    const bind = join(work, "bind-source", "made");
    const name = "userns-writes";
    await ok(["run", "--name", name, "-v", `${bind}:/out`, "-v", "userns-vol:/vol", "busybox", "sh", "-c",
      "echo a > /made && echo b > /out/f && echo c > /vol/f && mkdir /vol/d && chown 1000:1000 /vol/d"]);
    try {
      const id = (await ok(["inspect", "-f", "{{.Id}}", name])).trim();
      expect(owner(join(remappedRoot(), "overlay2", id, "diff", "made"))).to.equal(`${uidStart}:${gidStart}`);
      // the container's folder, whose network files its runtime binds from inside the user namespace
      expect(statSync(join(remappedRoot(), "containers", id)).mode & 0o777).to.equal(0o710);
      expect(owner(join(remappedRoot(), "containers", id))).to.equal(`0:${gidStart}`);
      expect(owner(bind)).to.equal(`${uidStart}:${gidStart}`); // a missing bind source is made for the remapped root
      expect(owner(join(bind, "f"))).to.equal(`${uidStart}:${gidStart}`);
      const mountpoint = (await ok(["volume", "inspect", "-f", "{{.Mountpoint}}", "userns-vol"])).trim();
      expect(mountpoint.startsWith(remappedRoot())).to.equal(true);
      expect(owner(mountpoint)).to.equal(`${uidStart}:${gidStart}`);
      expect(owner(join(mountpoint, "f"))).to.equal(`${uidStart}:${gidStart}`);
      expect(owner(join(mountpoint, "d"))).to.equal(`${uidStart + 1000}:${gidStart + 1000}`);
      // the volume again, from another container, as the container sees it
      expect((await ok(["run", "--rm", "-v", "userns-vol:/vol", "busybox", "sh", "-c", "cat /vol/f; stat -c %u:%g /vol/d"])).trim().split("\n")).to.deep.equal(["c", "1000:1000"]);
    } finally {
      await dk("rm", "-f", name);
      await dk("volume", "rm", "userns-vol");
    }
  });

  it("commits and saves images with the container's ids, not the host's", async () => {
    const name = "userns-commit";
    await ok(["run", "--name", name, "busybox", "sh", "-c", "echo x > /made && mkdir /home && echo y > /home/u && chown 1000:1001 /home/u"]);
    try {
      await ok(["commit", name, "userns-committed"]);
      const dir = makeTempDir("engine-userns-save-");
      const archive = join(dir, "image.tar");
      await ok(["save", "-o", archive, "userns-committed"]);
      execFileSync("tar", ["-xf", archive, "-C", dir]);
      const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as { Layers: string[] }[];
      const top = await tarOwners(readFileSync(join(dir, manifest[0].Layers.at(-1)!)));
      expect(top.get("made")).to.equal("0:0");
      expect(top.get("home/u")).to.equal("1000:1001");
      const base = await tarOwners(readFileSync(join(dir, manifest[0].Layers[0])));
      expect(base.get("bin/busybox")).to.equal("0:0");
      // and the image runs, its files the container's root's again
      expect((await ok(["run", "--rm", "userns-committed", "stat", "-c", "%u:%g", "/made", "/home/u"])).trim().split("\n")).to.deep.equal(["0:0", "1000:1001"]);
    } finally {
      await dk("rm", "-f", name);
      await dk("rmi", "userns-committed");
    }
  });

  it("copies out with the container's ids and in with the host's (docker cp)", async () => {
    const id = (await ok(["run", "-d", "busybox", "sh", "-c", "echo x > /made && chown 7:8 /made && sleep 60"])).trim();
    try {
      await ok(["exec", id, "test", "-f", "/made"]);
      const out = await docker(nd.host, ["cp", `${id}:/made`, "-"], {}, {});
      expect(out.code, out.stderr).to.equal(0);
      expect((await tarOwners(Buffer.from(out.stdout, "latin1"))).get("made")).to.equal("7:8");
      const src = join(makeTempDir("engine-userns-cp-"), "in.txt");
      writeFileSync(src, "in\n");
      await ok(["cp", src, `${id}:/in.txt`]);
      expect((await ok(["exec", id, "stat", "-c", "%u:%g", "/in.txt"])).trim()).to.equal("0:0");
      expect(owner(join(remappedRoot(), "overlay2", id, "diff", "in.txt"))).to.equal(`${uidStart}:${gidStart}`);
    } finally {
      await dk("rm", "-f", id);
    }
  });

  it("lets --userns=host opt a container out of the user namespace", async () => {
    const id = (await ok(["run", "-d", "--userns", "host", "busybox", "sleep", "60"])).trim();
    try {
      expect((await ok(["exec", id, "cat", "/proc/self/uid_map"])).trim().split(/\s+/)).to.deep.equal(["0", "0", "4294967295"]);
      const pid = Number((await ok(["inspect", "-f", "{{.State.Pid}}", id])).trim());
      expect(hostIds(pid).uid.split(/\s+/)).to.deep.equal(["0", "0", "0", "0"]);
      // its layers are the daemon's remapped ones, as with Docker
      expect((await ok(["exec", id, "stat", "-c", "%u", "/bin/busybox"])).trim()).to.equal(String(uidStart));
    } finally {
      await dk("rm", "-f", id);
    }
  });

  it("refuses --privileged, --net=host and --pid=host with Docker's messages, unless --userns=host", async () => {
    expect(await refused(["run", "--rm", "--privileged", "busybox", "true"])).to.include(
      "privileged mode is incompatible with user namespaces.  You must run the container in the host namespace when running privileged mode",
    );
    expect(await refused(["create", "--net", "host", "busybox", "true"])).to.include("cannot share the host's network namespace when user namespaces are enabled");
    expect(await refused(["create", "--pid", "host", "busybox", "true"])).to.include("cannot share the host PID namespace when user namespaces are enabled");
    const id = (await ok(["create", "--userns", "host", "--net", "host", "--pid", "host", "busybox", "true"])).trim();
    await dk("rm", id);
  });

  it("refuses a start whose data root a folder above keeps from the remapped root", async () => {
    const closed = makeTempDir("engine-userns-closed-"); // 0700, root's
    const r = await runEngined(["--data-root", join(closed, "data"), "--exec-root", join(closed, "exec"), "--pidfile", join(closed, "e.pid"),
      "-H", `unix://${join(closed, "e.sock")}`, "--bridge", "none", "--userns-remap=default"]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.include("restricts access to the remapped root uid/gid");
    expect(r.stderr).to.include(closed);
  });
});

describe("userns-remap: start refusals", function () {
  this.timeout(60_000);

  const roots = () => {
    const dir = makeTempDir("engine-userns-refused-");
    return ["--data-root", join(dir, "data"), "--exec-root", join(dir, "exec"), "--pidfile", join(dir, "e.pid"), "-H", `unix://${join(dir, "e.sock")}`, "--bridge", "none"];
  };

  it("names the file when the user has no subordinate ranges", async () => {
    const r = await runEngined([...roots(), "--userns-remap", "nobody:nogroup"]);
    expect(r.code).to.equal(1);
    expect(unquoted(r.stderr)).to.include('no subuid ranges found for user "nobody" in /etc/subuid');
  });

  it("names a user or group that does not exist", async () => {
    const user = await runEngined([...roots(), "--userns-remap", "engine-no-such-user"]);
    expect(user.code).to.equal(1);
    expect(unquoted(user.stderr)).to.include('Error during uid lookup for "engine-no-such-user"');
    const group = await runEngined([...roots(), "--userns-remap", "nobody:engine-no-such-group"]);
    expect(unquoted(group.stderr)).to.include('Error during groupname lookup for "engine-no-such-group"');
  });
});

describe("rootless: what --rootless needs", function () {
  this.timeout(60_000);

  const roots = () => {
    const dir = makeTempDir("engine-rootless-");
    chmodSync(dir, 0o755);
    return ["--data-root", join(dir, "data"), "--exec-root", join(dir, "exec"), "--pidfile", join(dir, "e.pid"), "-H", `unix://${join(dir, "e.sock")}`, "--bridge", "none"];
  };

  it("refuses root of the host's user namespace, as dockerd-rootless.sh does", async () => {
    const r = await runEngined([...roots(), "--rootless"]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.include("rootless mode: engined must be executed as a non-privileged user");
  });

  it("refuses --userns-remap beside it", async () => {
    const r = await runEngined([...roots(), "--rootless", "--userns-remap", "default"]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.include("--userns-remap cannot be used in rootless mode");
  });

  it("names everything an ordinary user without RootlessKit lacks", async () => {
    const r = await runCommand("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "--", ENGINED, ...roots(), "--rootless"], {
      env: { XDG_RUNTIME_DIR: undefined, HOME: "/nonexistent", PATH: "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin" },
    });
    expect(r.code, r.stderr).to.equal(1);
    for (const want of [
      "rootless mode needs what this host does not give it",
      "a user namespace: engined runs in the host's",
      "XDG_RUNTIME_DIR is not set",
      "HOME /nonexistent is not writable",
      "subordinate ids for user nobody in /etc/subuid",
      "subordinate ids for user nobody in /etc/subgid",
    ]) expect(r.stderr).to.include(want);
    // what is installed here is not named; what is not, is
    for (const [command, missing] of [["newuidmap", "newuidmap and newgidmap not on PATH"], ["slirp4netns", "slirp4netns or pasta not on PATH"]]) {
      const installed = runsCommand(command);
      if (installed) expect(r.stderr).to.not.include(missing);
      else expect(r.stderr).to.include(missing);
    }
  });

  it("inside RootlessKit is rootless by default, with its state in the user's XDG folders", async () => {
    const config = makeTempDir("engine-rootless-config-");
    const env = { ROOTLESSKIT_STATE_DIR: "/tmp/rootlesskit-state", XDG_RUNTIME_DIR: "/run/user/4242", HOME: "/home/someone", XDG_DATA_HOME: undefined, XDG_CONFIG_HOME: config };
    const help = await runEngined(["--help"], { env });
    expect(help.code).to.equal(0);
    const line = (flag: string) => help.stdout.split("\n").find((l) => l.includes(flag)) ?? "";
    expect(line("--data-root")).to.include("(default /home/someone/.local/share/engine)");
    expect(line("--exec-root")).to.include("(default /run/user/4242/engine)");
    expect(line("--pidfile")).to.include("(default /run/user/4242/engine.pid)");
    expect(line("--rootless")).to.include("(default true)");
    // root of the host's user namespace is refused there too: rootless is on without the flag
    const start = await runEngined(roots(), { env });
    expect(start.code).to.equal(1);
    expect(start.stderr).to.include("engined must be executed as a non-privileged user");
    // the configuration file is looked for under XDG_CONFIG_HOME
    mkdirSync(join(config, "engine"));
    writeFileSync(join(config, "engine", "daemon.json"), JSON.stringify({ "no-such-key": true }));
    const validate = await runEngined(["--validate"], { env });
    expect(validate.code).to.equal(1);
    expect(validate.stderr).to.include(join(config, "engine", "daemon.json"));
  });
});

/** The daemon's fatal line has its message's quotes escaped (logfmt). */
const unquoted = (text: string) => text.replace(/\\"/g, '"');

function runsCommand(command: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
