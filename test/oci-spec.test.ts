/**
 * The OCI runtime spec of runtime.ocirun: unit checks of `baseSpec` and its parts, then real
 * containers run by runc from a busybox root filesystem (cgroup v1 host, a fresh empty network
 * namespace, no traffic). Each real run uses its own id and is force-deleted; the cgroup
 * folders made under a per-run parent are removed at the end.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync, readdirSync, rmdirSync } from "node:fs";
import { chmod, copyFile, mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import type { ContainerCreateConfig, HostConfig } from "../core/containers/container-config.js";
import type { OciSpec, SpecContext } from "../core/contracts/runtime.js";
import type { ContainerConfig } from "../core/images/image-config.js";
import { resolveOptions } from "../core/options/resolve.js";
import type { RuleHost } from "../core/options/rules.js";
import { parseDaemonArgs } from "../host/daemon-args.js";
import plugin from "../plugins/runtime-ocirun/index.js";
import { runtimeArgs, serializeSpec, writeBundle } from "../plugins/runtime-ocirun/bundle.js";
import { globalRuntimeArgs } from "../host/containers/runtime-select.js";
import { findInit, INIT_DESTINATION } from "../plugins/runtime-ocirun/init.js";
import { builtinSeccompProfile } from "../plugins/runtime-ocirun/seccomp-profile.js";
import {
  baseSpec, boundingCapabilities, DEFAULT_CAPABILITIES, DEFAULT_MASKED_PATHS, DEFAULT_PATH, mergeEnv, resolveArgs, resolveCapabilities, SpecError,
} from "../plugins/runtime-ocirun/spec.js";
import { makeTempDir } from "./helpers/engined.js";
import "./helpers/root-hooks.js";

const run = promisify(execFile);
const v1: RuleHost = { platform: "linux", cgroupVersion: 1, systemd: false };
const v2systemd: RuleHost = { platform: "linux", cgroupVersion: 2, systemd: true };
const ID = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const daemon = (args: string[] = [], env: NodeJS.ProcessEnv = {}) => resolveOptions(parseDaemonArgs(args), env).config;

/** A fake image root filesystem with /etc/passwd and /etc/group (for the unit checks). */
let fakeRoot = "";

function ctxOf(o: {
  config?: Partial<ContainerCreateConfig>; hostConfig?: HostConfig; image?: ContainerConfig; args?: string[];
  host?: RuleHost; rootfs?: string; id?: string;
} = {}): SpecContext {
  return {
    containerId: o.id ?? ID,
    config: { Image: "busybox", ...o.config },
    hostConfig: o.hostConfig ?? {},
    imageConfig: o.image ?? { Cmd: ["sh"] },
    daemon: daemon(o.args),
    host: o.host ?? v1,
    rootfs: o.rootfs ?? fakeRoot,
    bundleDir: join(fakeRoot, "..", "bundle"),
  };
}
const spec = (o: Parameters<typeof ctxOf>[0] = {}) => baseSpec(ctxOf(o));

describe("oci spec: the base spec", () => {
  before(async () => {
    const dir = makeTempDir("oci-spec-");
    fakeRoot = join(dir, "rootfs");
    await mkdir(join(fakeRoot, "etc"), { recursive: true });
    await writeFile(join(fakeRoot, "etc/passwd"), [
      "root:x:0:0:root:/root:/bin/sh", "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin",
      "app:x:1000:1000::/home/app:/bin/sh", "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin", "",
    ].join("\n"));
    await writeFile(join(fakeRoot, "etc/group"), [
      "root:x:0:", "daemon:x:1:", "audio:x:29:app", "video:x:44:app,daemon", "app:x:1000:", "nogroup:x:65534:", "",
    ].join("\n"));
    // A root filesystem whose /etc/passwd is a link that points out of it: it must stay inside.
    const evil = join(dir, "evil");
    await mkdir(join(evil, "etc"), { recursive: true });
    await writeFile(join(dir, "passwd"), "mallory:x:4242:4242::/:/bin/sh\n");
    await symlink("../../../passwd", join(evil, "etc/passwd"));
  });

  it("is a complete OCI 1.0 spec with Docker's defaults", () => {
    const s = spec();
    expect(s.ociVersion).to.match(/^1\.0\./);
    expect(s.process!.args).to.deep.equal(["sh"]);
    expect(s.process!.cwd).to.equal("/");
    expect(s.process!.terminal).to.equal(false);
    expect(s.process!.user).to.deep.equal({ uid: 0, gid: 0, additionalGids: [0] });
    expect(s.process!.noNewPrivileges).to.equal(false);
    expect(s.process!.capabilities!.bounding).to.have.members([...DEFAULT_CAPABILITIES]);
    expect(s.process!.capabilities!.effective).to.have.length(14);
    expect(s.root).to.deep.equal({ path: fakeRoot, readonly: false });
    expect(s.hostname).to.equal(ID.slice(0, 12));
    expect(s.mounts!.map((m) => m.destination)).to.deep.equal(["/proc", "/dev", "/dev/pts", "/sys", "/sys/fs/cgroup", "/dev/mqueue", "/dev/shm"]);
    expect(s.mounts!.find((m) => m.destination === "/sys")!.options).to.include("ro");
    expect(s.linux!.namespaces!.map((n) => n.type)).to.deep.equal(["mount", "pid", "ipc", "uts", "network", "cgroup"]);
    expect(s.linux!.namespaces!.every((n) => n.path === undefined)).to.equal(true);
    expect(s.linux!.maskedPaths).to.deep.equal([...DEFAULT_MASKED_PATHS]);
    expect(s.linux!.readonlyPaths).to.include("/proc/sys");
    expect(s.linux!.resources!.devices![0]).to.deep.equal({ allow: false, access: "rwm" });
    expect(s.linux!.resources!.devices).to.deep.include({ allow: true, type: "c", major: 1, minor: 3, access: "rwm" });
    expect(s.linux!.seccomp!.defaultAction).to.equal("SCMP_ACT_ERRNO");
    expect(s.process!.rlimits).to.deep.equal([]);
  });

  it("resolves the command as Docker does", () => {
    const image = { Entrypoint: ["/entry"], Cmd: ["img-cmd"] };
    const table: [Partial<ContainerCreateConfig>, ContainerConfig, string[] | string][] = [
      [{}, image, ["/entry", "img-cmd"]],
      [{ Cmd: ["a", "b"] }, image, ["/entry", "a", "b"]],
      [{ Entrypoint: ["/other"] }, image, ["/other"]],
      [{ Entrypoint: ["/other"], Cmd: ["x"] }, image, ["/other", "x"]],
      [{ Entrypoint: [""], Cmd: ["echo", "hi"] }, image, ["echo", "hi"]],
      [{ Entrypoint: "/str", Cmd: "arg" }, image, ["/str", "arg"]],
      [{ Cmd: [] }, image, ["/entry", "img-cmd"]],
      [{}, { Cmd: ["sh"] }, ["sh"]],
      [{ Cmd: ["ls"] }, { Cmd: ["sh"] }, ["ls"]],
      [{}, { Entrypoint: null, Cmd: null }, "no command specified"],
      [{ Entrypoint: [""] }, image, "no command specified"],
    ];
    for (const [config, img, want] of table) {
      const ctx = { config: { Image: "x", ...config }, imageConfig: img };
      if (typeof want === "string") expect(() => resolveArgs(ctx), JSON.stringify(config)).to.throw(SpecError, want);
      else expect(resolveArgs(ctx), JSON.stringify(config)).to.deep.equal(want);
    }
  });

  it("merges the environment as Docker: PATH, HOSTNAME, TERM, then request env, then the image env it leaves; a bare NAME unsets", () => {
    const s = spec({ config: { Env: ["B=req", "C=3", "NOEQ"], Hostname: "box" }, image: { Cmd: ["sh"], Env: ["A=1", "B=img"] } });
    expect(s.process!.env).to.deep.equal([`PATH=${DEFAULT_PATH}`, "HOSTNAME=box", "B=req", "C=3", "A=1"]);
    expect(s.hostname).to.equal("box");
    const withPath = spec({ image: { Cmd: ["sh"], Env: ["PATH=/bin"] }, config: { Tty: true } });
    expect(withPath.process!.env).to.deep.equal(["PATH=/bin", "HOSTNAME=" + ID.slice(0, 12), "TERM=xterm"]);
    // a bare name hides the image's entry and removes a default
    const unset = spec({ config: { Env: ["A", "HOSTNAME", "Z="], Hostname: "box" }, image: { Cmd: ["sh"], Env: ["A=1", "B=2"] } });
    expect(unset.process!.env).to.deep.equal([`PATH=${DEFAULT_PATH}`, "Z=", "B=2"]);
    expect(withPath.process!.terminal).to.equal(true);
    expect(mergeEnv(["A=1", "B=2"], ["A", "C=3"])).to.deep.equal(["B=2", "C=3"]);
  });

  it("takes WorkingDir, User and Labels from the request over the image", () => {
    const s = spec({ config: { WorkingDir: "/req", Labels: { b: "2" } }, image: { Cmd: ["sh"], WorkingDir: "/img", User: "app", Labels: { a: "1", b: "1" } } });
    expect(s.process!.cwd).to.equal("/req");
    expect(s.process!.user.uid).to.equal(1000);
    expect(s.annotations).to.deep.equal({ a: "1", b: "2" });
    expect(spec({ image: { Cmd: ["sh"], WorkingDir: "/img" } }).process!.cwd).to.equal("/img");
  });

  it("resolves users and groups from the image's /etc/passwd and /etc/group", () => {
    const user = (u: string, groupAdd?: string[]) => spec({ config: { User: u }, hostConfig: { GroupAdd: groupAdd } }).process!.user;
    // the primary group is also a supplementary one (Docker since 20.10.18), then the user's
    // memberships (only when no group is named), then GroupAdd's
    expect(user("nobody")).to.deep.equal({ uid: 65534, gid: 65534, additionalGids: [65534] });
    expect(user("app")).to.deep.equal({ uid: 1000, gid: 1000, additionalGids: [1000, 29, 44] });
    expect(user("1000")).to.deep.equal({ uid: 1000, gid: 1000, additionalGids: [1000, 29, 44] });
    expect(user("4321")).to.deep.equal({ uid: 4321, gid: 0, additionalGids: [0] });
    expect(user("4321:77")).to.deep.equal({ uid: 4321, gid: 77, additionalGids: [77] });
    expect(user("app:video")).to.deep.equal({ uid: 1000, gid: 44, additionalGids: [44] });
    expect(user("daemon", ["audio", "7"])).to.deep.equal({ uid: 1, gid: 1, additionalGids: [1, 44, 29, 7] });
    expect(() => user("ghost")).to.throw(SpecError, "unable to find user ghost");
    expect(() => user("app:ghosts")).to.throw(SpecError, "unable to find group ghosts");
    const evil = join(fakeRoot, "..", "evil");
    expect(() => spec({ rootfs: evil, config: { User: "mallory" } })).to.throw(SpecError, "unable to find user mallory");
  });

  it("adds and drops capabilities, ALL included", () => {
    const caps = (hostConfig: HostConfig) => spec({ hostConfig }).process!.capabilities!.bounding!;
    const some = caps({ CapAdd: ["SYS_ADMIN"], CapDrop: ["NET_RAW", "cap_chown"] });
    expect(some).to.include("CAP_SYS_ADMIN").and.have.length(13);
    expect(some.filter((c) => c === "CAP_NET_RAW" || c === "CAP_CHOWN")).to.deep.equal([]);
    expect(caps({ CapDrop: ["ALL"], CapAdd: ["NET_BIND_SERVICE"] })).to.deep.equal(["CAP_NET_BIND_SERVICE"]);
    expect(caps({ CapDrop: ["ALL"] })).to.deep.equal([]);
    const all = caps({ CapAdd: ["ALL"], CapDrop: ["SYS_ADMIN"] });
    // ALL: the bounding set's (a daemon run in a container may lack some of them)
    expect(all).to.include("CAP_SYS_MODULE").and.deep.equal(boundingCapabilities().filter((c) => c !== "CAP_SYS_ADMIN"));
    expect(all).to.not.include("CAP_SYS_ADMIN");
    expect(() => caps({ CapAdd: ["FLY"] })).to.throw(SpecError, 'unknown capability: "FLY"');
  });

  it("applies --default-ulimit, per-container values overriding, -1 written as RLIM_INFINITY", () => {
    const s = baseSpec({
      ...ctxOf({ args: ["--default-ulimit", "nofile=1024:2048", "--default-ulimit", "nproc=100"] }),
      hostConfig: { Ulimits: [{ Name: "nofile", Soft: 10, Hard: 20 }, { Name: "core", Soft: -1, Hard: -1 }] },
    });
    expect(s.process!.rlimits).to.deep.equal([
      { type: "RLIMIT_NOFILE", soft: 10, hard: 20 }, { type: "RLIMIT_NPROC", soft: 100, hard: 100 },
      { type: "RLIMIT_CORE", soft: -1, hard: -1 },
    ]);
    expect(serializeSpec(s)).to.match(/"type": "RLIMIT_CORE",\s+"hard": 18446744073709551615,\s+"soft": 18446744073709551615/);
  });

  it("sets no-new-privileges from the daemon and SecurityOpt", () => {
    const nnp = (args: string[], opts: string[]) => spec({ args, hostConfig: { SecurityOpt: opts } }).process!.noNewPrivileges;
    expect(nnp([], [])).to.equal(false);
    expect(nnp(["--no-new-privileges"], [])).to.equal(true);
    expect(nnp([], ["no-new-privileges"])).to.equal(true);
    expect(nnp([], ["no-new-privileges:true"])).to.equal(true);
    expect(nnp(["--no-new-privileges"], ["no-new-privileges=false"])).to.equal(false);
  });

  it("makes cgroupsPath for cgroupfs: /engine by default, a leading slash from the root, none relative", () => {
    const path = (args: string[], hostConfig: HostConfig = {}, host = v1) => spec({ args, hostConfig, host }).linux!.cgroupsPath;
    expect(path([])).to.equal(`/engine/${ID}`);
    expect(path(["--cgroup-parent", "/custom/"])).to.equal(`/custom/${ID}`);
    expect(path(["--cgroup-parent", "relative/sub"])).to.equal(`relative/sub/${ID}`);
    expect(path(["--cgroup-parent", "/"])).to.equal(`/${ID}`);
    expect(path(["--cgroup-parent", "/custom"], { CgroupParent: "mine" })).to.equal(`mine/${ID}`);
    expect(path(["--exec-opt", "native.cgroupdriver=cgroupfs"], {}, v2systemd)).to.equal(`/engine/${ID}`);
  });

  it("makes cgroupsPath for systemd: <slice>:engine:<id>, slices only", () => {
    const path = (args: string[], hostConfig: HostConfig = {}, host = v2systemd) => spec({ args, hostConfig, host }).linux!.cgroupsPath;
    expect(path([])).to.equal(`system.slice:engine:${ID}`);
    expect(path(["--cgroup-parent", "engine.slice"])).to.equal(`engine.slice:engine:${ID}`);
    expect(path(["--exec-opt", "native.cgroupdriver=systemd"], {}, v1)).to.equal(`system.slice:engine:${ID}`);
    expect(path([], { CgroupParent: "user-1000.slice" })).to.equal(`user-1000.slice:engine:${ID}`);
    expect(() => path([], { CgroupParent: "/engine" })).to.throw(SpecError, "must be a slice name");
    expect(globalRuntimeArgs(daemon(), v2systemd)).to.deep.equal(["--systemd-cgroup"]);
    expect(globalRuntimeArgs(daemon(), v1)).to.deep.equal([]);
  });

  it("sizes /dev/shm from ShmSize, else --default-shm-size", () => {
    const shm = (s: OciSpec) => s.mounts!.find((m) => m.destination === "/dev/shm")!.options;
    expect(shm(spec())).to.include(`size=${64 * 1024 * 1024}`).and.include("mode=1777");
    expect(shm(spec({ args: ["--default-shm-size", "128m"] }))).to.include(`size=${128 * 1024 * 1024}`);
    expect(shm(spec({ args: ["--default-shm-size", "128m"], hostConfig: { ShmSize: 1048576 } }))).to.include("size=1048576");
  });

  it("follows the ipc and cgroup namespace modes", () => {
    const types = (s: OciSpec) => s.linux!.namespaces!.map((n) => n.type);
    expect(types(spec({ args: ["--default-cgroupns-mode", "host"] }))).to.not.include("cgroup");
    expect(types(spec({ args: ["--default-cgroupns-mode", "host"], hostConfig: { CgroupnsMode: "private" } }))).to.include("cgroup");
    expect(types(spec({ hostConfig: { CgroupnsMode: "host" } }))).to.not.include("cgroup");
    const hostIpc = spec({ hostConfig: { IpcMode: "host" } });
    expect(types(hostIpc)).to.not.include("ipc");
    expect(hostIpc.mounts!.find((m) => m.destination === "/dev/shm")!.type).to.equal("bind");
    expect(types(spec({ args: ["--default-ipc-mode", "shareable"] }))).to.include("ipc");
    expect(spec({ hostConfig: { IpcMode: "none" } }).mounts!.map((m) => m.destination)).to.not.include("/dev/shm");
    // container:<id>: the namespace stays, its path and /dev/shm come from host/containers/shared-namespaces.ts
    const joined = spec({ hostConfig: { IpcMode: "container:abc" } });
    expect(types(joined)).to.include("ipc");
    expect(joined.mounts!.map((m) => m.destination)).to.not.include("/dev/shm");
    expect(() => spec({ hostConfig: { IpcMode: "bogus" } })).to.throw(SpecError, "not supported");
  });

  it("gives a privileged container every capability (of the bounding set) and device, no masks and no seccomp but its own", () => {
    const s = spec({ hostConfig: { Privileged: true, CapDrop: ["ALL"] } });
    expect(s.process!.capabilities!.bounding).to.deep.equal(boundingCapabilities());
    expect(resolveCapabilities([], [], true)).to.have.length(41);
    expect(s.linux!.devices!.map((d) => d.path)).to.include.members(["/dev/null", "/dev/zero"]);
    expect(s.linux!.maskedPaths).to.equal(undefined);
    expect(s.linux!.readonlyPaths).to.equal(undefined);
    expect(s.linux!.seccomp).to.equal(undefined);
    expect(s.linux!.resources!.devices).to.deep.equal([{ allow: true, access: "rwm" }]);
    expect(s.mounts!.find((m) => m.destination === "/sys")!.options).to.include("rw");
    // a profile of its own applies all the same (moby's WithSeccomp), unconfined is none
    const profile = JSON.stringify({ defaultAction: "SCMP_ACT_ALLOW", syscalls: [{ names: ["chmod"], action: "SCMP_ACT_ERRNO" }] });
    const own = spec({ hostConfig: { Privileged: true, SecurityOpt: [`seccomp=${profile}`] } });
    expect(own.linux!.seccomp!.defaultAction).to.equal("SCMP_ACT_ALLOW");
    expect(own.linux!.seccomp!.syscalls!.map((r) => r.names)).to.deep.equal([["chmod"]]);
    expect(spec({ hostConfig: { Privileged: true, SecurityOpt: ["seccomp=unconfined"] } }).linux!.seccomp).to.equal(undefined);
  });

  it("writes OomScoreAdj (0 too), MemorySwappiness, BlkioWeight, Annotations over labels, devices and cgroup rules as Docker does", () => {
    expect(spec({}).process!.oomScoreAdj).to.equal(0);
    const s = spec({
      config: { Labels: { a: "label", b: "label" } },
      hostConfig: {
        OomScoreAdj: 345, MemorySwappiness: 17, BlkioWeight: 300, Annotations: { a: "annotation" },
        Devices: [{ PathOnHost: "/dev/null", PathInContainer: "/dev/mynull", CgroupPermissions: "r" }],
        DeviceCgroupRules: ["c 42:* rmw", "a *:* r"],
      },
    });
    expect(s.process!.oomScoreAdj).to.equal(345);
    expect(s.linux!.resources!.memory!.swappiness).to.equal(17);
    expect(s.linux!.resources!.blockIO).to.deep.equal({ weight: 300 });
    expect(s.annotations).to.include({ a: "annotation", b: "label" });
    expect(s.linux!.devices).to.deep.equal([{ path: "/dev/mynull", type: "c", major: 1, minor: 3, fileMode: 0o666, uid: 0, gid: 0 }]);
    expect(s.linux!.resources!.devices!.slice(-3)).to.deep.equal([
      { allow: true, type: "c", major: 1, minor: 3, access: "r" },
      { allow: true, type: "c", major: 42, minor: -1, access: "rmw" },
      { allow: true, type: "a", major: -1, minor: -1, access: "r" },
    ]);
    expect(spec({ hostConfig: { MemorySwappiness: -1 } }).linux!.resources!.memory).to.equal(undefined);
  });

  it("makes the root read-only with ReadonlyRootfs", () => {
    expect(spec({ hostConfig: { ReadonlyRootfs: true } }).root!.readonly).to.equal(true);
  });

  it("chooses the seccomp profile: builtin, unconfined, a file, or the container's own", async () => {
    const builtin = spec().linux!.seccomp!;
    expect(builtin).to.deep.equal(builtinSeccompProfile());
    expect(builtin.defaultErrnoRet).to.equal(1);
    expect(builtin.architectures).to.include("SCMP_ARCH_X86_64").and.include("SCMP_ARCH_X32").and.include("SCMP_ARCH_X86");
    expect(builtinSeccompProfile("arm64").architectures).to.include("SCMP_ARCH_AARCH64");
    const allowed = builtin.syscalls!.flatMap((s) => (s.action === "SCMP_ACT_ALLOW" ? s.names : []));
    expect(allowed).to.include("execve").and.include("read");
    for (const denied of ["mount", "umount2", "unshare", "setns", "pivot_root", "reboot", "init_module", "kexec_load", "bpf"]) {
      expect(allowed, denied).to.not.include(denied);
    }
    expect(spec({ args: ["--seccomp-profile", "unconfined"] }).linux!.seccomp).to.equal(undefined);
    expect(spec({ hostConfig: { SecurityOpt: ["seccomp=unconfined"] } }).linux!.seccomp).to.equal(undefined);
    const file = join(fakeRoot, "..", "profile.json");
    const profile = { defaultAction: "SCMP_ACT_LOG", architectures: ["SCMP_ARCH_X86_64"], syscalls: [{ names: ["mount"], action: "SCMP_ACT_ERRNO" }] };
    await writeFile(file, JSON.stringify(profile));
    expect(spec({ args: ["--seccomp-profile", file] }).linux!.seccomp).to.deep.equal(profile);
    // Docker's form: archMap and includes by capability.
    const docker = {
      defaultAction: "SCMP_ACT_ERRNO",
      archMap: [{ architecture: "SCMP_ARCH_X86_64", subArchitectures: ["SCMP_ARCH_X86"] }, { architecture: "SCMP_ARCH_AARCH64", subArchitectures: [] }],
      syscalls: [{ names: ["read"], action: "SCMP_ACT_ALLOW" }, { names: ["mount"], action: "SCMP_ACT_ALLOW", includes: { caps: ["CAP_SYS_ADMIN"] } }],
    };
    const own = spec({ hostConfig: { SecurityOpt: [`seccomp=${JSON.stringify(docker)}`] } }).linux!.seccomp!;
    expect(own.architectures).to.deep.equal(["SCMP_ARCH_X86_64", "SCMP_ARCH_X86"]);
    expect(own.syscalls).to.deep.equal([{ names: ["read"], action: "SCMP_ACT_ALLOW" }]);
    const admin = spec({ hostConfig: { CapAdd: ["SYS_ADMIN"], SecurityOpt: [`seccomp=${JSON.stringify(docker)}`] } }).linux!.seccomp!;
    expect(admin.syscalls).to.have.length(2);
  });

  it("sets memory, CPU and pids limits from HostConfig", () => {
    const r = spec({ hostConfig: { Memory: 64 << 20, MemorySwap: 128 << 20, NanoCpus: 1_500_000_000, CpuShares: 512, CpusetCpus: "0", PidsLimit: 50 } }).linux!.resources!;
    expect(r.memory).to.deep.equal({ limit: 64 << 20, swap: 128 << 20 });
    expect(r.cpu).to.deep.equal({ shares: 512, period: 100000, quota: 150000, cpus: "0" });
    expect(r.pids).to.deep.equal({ limit: 50 });
    const q = spec({ hostConfig: { CpuQuota: 20000, CpuPeriod: 50000, PidsLimit: -1 } }).linux!.resources!;
    expect(q.cpu).to.deep.equal({ quota: 20000, period: 50000 });
    expect(q.pids).to.equal(undefined);
    expect(q.memory).to.equal(undefined);
    expect(() => spec({ hostConfig: { NanoCpus: 1e9, CpuQuota: 1000 } })).to.throw(SpecError, "conflicting options");
    expect(() => spec({ hostConfig: { MemorySwap: 1 << 20 } })).to.throw(SpecError, "memory limit");
  });

  it("prefixes the command with tini and mounts it read-only with Init", () => {
    const s = spec({ hostConfig: { Init: true }, args: ["--init-path", "/opt/tini"] });
    expect(s.process!.args).to.deep.equal([INIT_DESTINATION, "--", "sh"]);
    expect(s.mounts!.at(-1)).to.deep.equal({ destination: INIT_DESTINATION, type: "bind", source: "/opt/tini", options: ["bind", "ro"] });
    expect(spec({ args: ["--init"] }).process!.args[0]).to.equal(INIT_DESTINATION);
    expect(spec({ args: ["--init"], hostConfig: { Init: false } }).process!.args).to.deep.equal(["sh"]);
    expect(findInit("", "/nonexistent-dir")).to.equal(undefined);
  });

  it("asks for --no-pivot with ENGINE_RAMDISK, and writes config.json in the bundle", async () => {
    expect(runtimeArgs(daemon([], { ENGINE_RAMDISK: "1" }))).to.deep.equal(["--no-pivot"]);
    expect(runtimeArgs(daemon())).to.deep.equal([]);
    const ctx = ctxOf();
    const written = await writeBundle(ctx, async (s, c) => ({ ...s, hostname: `${c.containerId.slice(0, 4)}-tapped` }));
    const onDisk = JSON.parse(await readFile(join(ctx.bundleDir, "config.json"), "utf8")) as OciSpec;
    expect(onDisk.hostname).to.equal("0123-tapped");
    expect(onDisk).to.deep.equal(JSON.parse(JSON.stringify(written)));
    expect(plugin.manifest).to.include({ id: "runtime.ocirun", kind: "runtime" });
  });
});

// --- real containers ---------------------------------------------------------------------------

const RUNC = "/usr/sbin/runc";
const CGROUP_PARENT = `/engine-ocitest-${process.pid}`;
let counter = 0;

interface RunResult { code: number | null; stdout: string; stderr: string }

describe("oci spec: real containers with runc", function () {
  this.timeout(30_000);
  let dir = "";
  let rootfs = "";
  const ids: string[] = [];

  before(async function () {
    if (process.getuid?.() !== 0 || !existsSync(RUNC) || !existsSync("/usr/bin/busybox")) {
      this.skip(); // needs root, runc and busybox

    }
    dir = makeTempDir("oci-run-");
    rootfs = join(dir, "rootfs");
    for (const d of ["bin", "etc", "proc", "sys", "dev", "tmp"]) await mkdir(join(rootfs, d), { recursive: true });
    await copyFile("/usr/bin/busybox", join(rootfs, "bin/busybox"));
    await chmod(join(rootfs, "bin/busybox"), 0o755);
    const { stdout } = await run("/usr/bin/busybox", ["--list"]);
    for (const a of stdout.split("\n").filter((x) => x && x !== "busybox")) await symlink("busybox", join(rootfs, "bin", a));
    await writeFile(join(rootfs, "etc/passwd"), "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n");
    await writeFile(join(rootfs, "etc/group"), "root:x:0:\nnogroup:x:65534:\n");
  });

  after(() => {
    // runc removes each container's cgroup on delete; remove what is left, then the parent.
    let hierarchies: string[] = [];
    try {
      hierarchies = readdirSync("/sys/fs/cgroup").map((h) => join("/sys/fs/cgroup", h));
    } catch {
      return;
    }
    for (const h of hierarchies) {
      for (const id of ids) {
        try { rmdirSync(join(h, CGROUP_PARENT, id)); } catch { /* gone */ }
      }
      try { rmdirSync(join(h, CGROUP_PARENT)); } catch { /* gone or never made */ }
    }
  });

  async function runContainer(cmd: string[], o: { args?: string[]; config?: Partial<ContainerCreateConfig>; hostConfig?: HostConfig } = {}): Promise<RunResult> {
    const id = `ocitest-${process.pid}-${++counter}`;
    ids.push(id);
    const ctx: SpecContext = {
      containerId: id,
      config: { Image: "busybox", Cmd: cmd, ...o.config },
      hostConfig: o.hostConfig ?? {},
      imageConfig: { Env: ["PATH=/bin"] },
      daemon: daemon(["--cgroup-parent", CGROUP_PARENT, ...(o.args ?? [])]),
      host: v1,
      rootfs,
      bundleDir: join(dir, "bundles", id),
    };
    await writeBundle(ctx);
    const root = join(dir, "runc-root");
    try {
      return await new Promise<RunResult>((resolve, reject) => {
        const child = spawn(RUNC, ["--root", root, "run", ...runtimeArgs(ctx.daemon), "--bundle", ctx.bundleDir, id], { stdio: ["ignore", "pipe", "pipe"] });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
        child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
        child.on("error", reject);
        child.on("close", (code) => {
          clearTimeout(timer);
          resolve({ code, stdout, stderr });
        });
      });
    } finally {
      await run(RUNC, ["--root", root, "delete", "-f", id]).catch(() => undefined);
    }
  }

  it("runs echo hi and exits 0", async () => {
    const r = await runContainer(["echo", "hi"]);
    expect(r, r.stderr).to.deep.include({ code: 0, stdout: "hi\n" });
  });

  it("passes the exit code through", async () => {
    const r = await runContainer(["sh", "-c", "exit 3"]);
    expect(r.code, r.stderr).to.equal(3);
  });

  it("applies the memory limit (cgroup v1)", async () => {
    const r = await runContainer(["cat", "/sys/fs/cgroup/memory/memory.limit_in_bytes"], { hostConfig: { Memory: 64 * 1024 * 1024 } });
    expect(r, r.stderr).to.deep.include({ code: 0, stdout: `${64 * 1024 * 1024}\n` });
  });

  it("runs as the image's nobody user", async () => {
    const r = await runContainer(["id", "-u"], { config: { User: "nobody" } });
    expect(r, r.stderr).to.deep.include({ code: 0, stdout: "65534\n" });
  });

  it("runs tini as pid 1 with Init", async function () {
    if (!findInit("")) {
      this.test!.title += " (skipped: no tini on PATH)";
      this.skip();
    }
    const r = await runContainer(["sh", "-c", `tr '\\0' ' ' < /proc/1/cmdline; echo; ${INIT_DESTINATION} --version`], { hostConfig: { Init: true } });
    expect(r.code, r.stderr).to.equal(0);
    const [cmdline, version] = r.stdout.split("\n");
    expect(cmdline).to.match(new RegExp(`^${INIT_DESTINATION} -- sh -c `));
    expect(version).to.match(/^tini version /);
  });

  it("lets busybox run under the builtin seccomp profile but refuses a syscall it leaves out", async () => {
    const r = await runContainer(["sh", "-c", "grep Seccomp: /proc/self/status; ls / > /dev/null && echo ok; unshare -U true; echo rc=$?"]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/Seccomp:\s+2\n/).and.include("ok\n").and.include("rc=1\n");
    expect(r.stderr).to.include("Operation not permitted");
    const free = await runContainer(["sh", "-c", "grep Seccomp: /proc/self/status; unshare -U true; echo rc=$?"], { args: ["--seccomp-profile", "unconfined"] });
    expect(free.stdout, free.stderr).to.match(/Seccomp:\s+0\n/).and.include("rc=0\n");
  });

  it("sets no_new_privs with --no-new-privileges", async () => {
    const on = await runContainer(["grep", "NoNewPrivs", "/proc/self/status"], { args: ["--no-new-privileges"] });
    expect(on.stdout, on.stderr).to.match(/NoNewPrivs:\s+1/);
    const off = await runContainer(["grep", "NoNewPrivs", "/proc/self/status"]);
    expect(off.stdout, off.stderr).to.match(/NoNewPrivs:\s+0/);
  });

  it("has only a loopback interface in its fresh network namespace", async () => {
    const r = await runContainer(["ls", "/sys/class/net"]);
    expect(r, r.stderr).to.deep.include({ code: 0, stdout: "lo\n" });
  });
});
