/**
 * The base OCI runtime spec (config.json, runtime spec 1.0.x) of one container, made from the
 * create request, the image's configuration and the daemon's defaults, the way Docker makes
 * it. `baseSpec` reads nothing but the image's /etc/passwd and /etc/group inside the root
 * filesystem (for user names) and a seccomp profile file the operator named; it writes nothing.
 * Other plugins finish the spec in the `processSpec` waterfall (see core/contracts/runtime.ts).
 */
import { createEnv, mergeEnv, processEnv, resolveCommand } from "../../core/containers/command.js";
import { lstatSync, readFileSync, readlinkSync } from "node:fs";
import { posix } from "node:path";
import type { ContainerUlimit } from "../../core/containers/container-config.js";
import type { OciDeviceRule, OciMount, OciNamespace, OciResources, OciSeccomp, OciSpec, SpecContext } from "../../core/contracts/runtime.js";
import { replacedByUserMounts } from "../../core/containers/user-mounts.js";
import { cgroupDriverOf, cgroupParentOf } from "../../core/options/rules.js";
import { resolveBlockIo } from "./block-io.js";
import { resolveDevices } from "./devices.js";
import { applyInit } from "./init.js";
import { builtinSeccompProfile, seccompArchitectures } from "./seccomp-profile.js";

const OCI_VERSION = "1.0.2";
export const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** Every capability Linux knows (to CAP_CHECKPOINT_RESTORE, 5.9). */
export const ALL_CAPABILITIES: readonly string[] = [
  "CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "SETPCAP",
  "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "IPC_OWNER", "SYS_MODULE",
  "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT", "SYS_ADMIN", "SYS_BOOT", "SYS_NICE", "SYS_RESOURCE", "SYS_TIME",
  "SYS_TTY_CONFIG", "MKNOD", "LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP", "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG",
  "WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF", "CHECKPOINT_RESTORE",
].map((c) => `CAP_${c}`);

/** Docker's default capability set. */
export const DEFAULT_CAPABILITIES: readonly string[] = [
  "CHOWN", "DAC_OVERRIDE", "FSETID", "FOWNER", "MKNOD", "NET_RAW", "SETGID", "SETUID", "SETFCAP", "SETPCAP",
  "NET_BIND_SERVICE", "SYS_CHROOT", "KILL", "AUDIT_WRITE",
].map((c) => `CAP_${c}`);

export const DEFAULT_MASKED_PATHS: readonly string[] = [
  "/proc/asound", "/proc/acpi", "/proc/interrupts", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
  "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware",
  "/sys/devices/virtual/powercap",
];

export const DEFAULT_READONLY_PATHS: readonly string[] = ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"];

/** The device cgroup rules after "deny all": runc's and Docker's default allow list. */
const DEFAULT_DEVICE_RULES: readonly OciDeviceRule[] = [
  { allow: true, type: "c", access: "m" }, // mknod of any character device
  { allow: true, type: "b", access: "m" }, // and any block device
  { allow: true, type: "c", major: 1, minor: 3, access: "rwm" }, // /dev/null
  { allow: true, type: "c", major: 1, minor: 8, access: "rwm" }, // /dev/random
  { allow: true, type: "c", major: 1, minor: 7, access: "rwm" }, // /dev/full
  { allow: true, type: "c", major: 5, minor: 0, access: "rwm" }, // /dev/tty
  { allow: true, type: "c", major: 1, minor: 5, access: "rwm" }, // /dev/zero
  { allow: true, type: "c", major: 1, minor: 9, access: "rwm" }, // /dev/urandom
  { allow: true, type: "c", major: 5, minor: 1, access: "rwm" }, // /dev/console
  { allow: true, type: "c", major: 136, access: "rwm" }, // /dev/pts/*
  { allow: true, type: "c", major: 5, minor: 2, access: "rwm" }, // /dev/ptmx
  { allow: true, type: "c", major: 10, minor: 200, access: "rwm" }, // /dev/net/tun
];

/** A request the spec cannot be made from (bad user, unknown capability, no command): a 400 for the API. */
export class SpecError extends Error {
  override name = "SpecError";
}

// --- process.args ------------------------------------------------------------------------------

/** The command resolved at create, else by Docker's rules (core/containers/command.ts); an empty command is refused. */
export function resolveArgs(ctx: Pick<SpecContext, "config" | "imageConfig" | "command">): string[] {
  const { entrypoint, cmd } = ctx.command ? { entrypoint: [], cmd: [...ctx.command] } : resolveCommand(ctx.config, ctx.imageConfig);
  const args = [...entrypoint, ...cmd];
  if (args.length === 0) throw new SpecError("no command specified");
  return args;
}

export { mergeEnv };

// --- process.env -------------------------------------------------------------------------------


/**
 * Docker's: PATH, HOSTNAME and TERM (with a tty), the legacy links' variables, then the
 * container's environment over them (the request's, then the image's it leaves;
 * core/containers/command.ts). A bare `NAME` in the request unsets NAME: the image's, and a default's.
 */
function resolveEnv(ctx: Pick<SpecContext, "config" | "imageConfig" | "linkEnv">, hostname: string): string[] {
  // the record's Env already holds the image's entries it keeps: merging again changes nothing
  const env = createEnv(ctx.imageConfig.Env ?? [], ctx.config.Env ?? []);
  const defaults = [`PATH=${DEFAULT_PATH}`, `HOSTNAME=${hostname}`, ...(ctx.config.Tty ? ["TERM=xterm"] : []), ...(ctx.linkEnv ?? [])];
  return processEnv(defaults, env);
}

// --- process.user ------------------------------------------------------------------------------

/**
 * The host path of `path` inside `root`, with symbolic links resolved as if `root` were `/`
 * (an image's /etc/passwd that links to `/../../etc/shadow` stays inside the image).
 */
function pathInRoot(root: string, path: string): string {
  const parts = posix.normalize(`/${path}`).split("/").filter(Boolean);
  const done: string[] = [];
  let links = 0;
  while (parts.length > 0) {
    const part = parts.shift()!;
    if (part === ".") continue;
    if (part === "..") {
      done.pop();
      continue;
    }
    const host = posix.join(root, ...done, part);
    let target: string | undefined;
    try {
      if (lstatSync(host).isSymbolicLink()) target = readlinkSync(host);
    } catch {
      // missing: the rest is kept as it is
    }
    if (target === undefined) {
      done.push(part);
      continue;
    }
    if (++links > 40) throw new SpecError(`too many symbolic links in ${path}`);
    if (target.startsWith("/")) done.length = 0;
    parts.unshift(...target.split("/").filter(Boolean));
  }
  return posix.join(root, ...done);
}

interface PasswdEntry { name: string; uid: number; gid: number }
interface GroupEntry { name: string; gid: number; members: string[] }

function readRootFile(rootfs: string, path: string): string[] {
  try {
    return readFileSync(pathInRoot(rootfs, path), "utf8").split("\n");
  } catch {
    return [];
  }
}

function readPasswd(rootfs: string): PasswdEntry[] {
  return readRootFile(rootfs, "/etc/passwd").flatMap((line) => {
    const f = line.split(":");
    if (f.length < 4 || line.startsWith("#")) return [];
    const uid = Number(f[2]);
    const gid = Number(f[3]);
    return Number.isInteger(uid) && Number.isInteger(gid) ? [{ name: f[0], uid, gid }] : [];
  });
}

function readGroup(rootfs: string): GroupEntry[] {
  return readRootFile(rootfs, "/etc/group").flatMap((line) => {
    const f = line.split(":");
    if (f.length < 3 || line.startsWith("#")) return [];
    const gid = Number(f[2]);
    return Number.isInteger(gid) ? [{ name: f[0], gid, members: (f[3] ?? "").split(",").filter(Boolean) }] : [];
  });
}

/**
 * A user or group given as a number, as Docker's user library reads one (Go's Atoi: a sign
 * allowed): undefined for a name; a number outside 0..2^31-1 refused.
 */
function numericId(s: string): number | undefined {
  if (!/^[+-]?\d+$/.test(s)) return undefined;
  const n = Number(s);
  if (n < 0 || n > 2 ** 31 - 1) throw new SpecError("uids and gids must be in range 0-2147483647");
  return n;
}

/**
 * `user[:group]` as Docker resolves it: a name must be in the image's /etc/passwd; a number
 * need not be (then gid 0). Supplementary groups are the groups listing the user, and GroupAdd.
 */
export function resolveUser(
  rootfs: string, user: string | undefined, groupAdd: readonly string[] = [],
): { uid: number; gid: number; additionalGids?: number[] } {
  const spec = user ?? "";
  const colon = spec.indexOf(":");
  const userPart = colon < 0 ? spec : spec.slice(0, colon);
  const groupPart = colon < 0 ? undefined : spec.slice(colon + 1);
  const passwd = readPasswd(rootfs);
  let uid = 0;
  let gid = 0;
  let name: string | undefined;
  const numericUid = numericId(userPart);
  const numericGroup = groupPart === undefined ? undefined : numericId(groupPart);
  if (userPart === "" || numericUid !== undefined) {
    uid = numericUid ?? 0;
    const entry = passwd.find((p) => p.uid === uid);
    if (entry) ({ gid, name } = entry);
  } else {
    const entry = passwd.find((p) => p.name === userPart);
    if (!entry) throw new SpecError(`unable to find user ${userPart}: no matching entries in passwd file`);
    ({ uid, gid, name } = entry);
  }
  const groups = groupPart !== undefined || name !== undefined || groupAdd.length > 0 ? readGroup(rootfs) : [];
  const groupId = (g: string): number => {
    const n = g === groupPart ? numericGroup : numericId(g);
    if (n !== undefined) return n;
    const entry = groups.find((e) => e.name === g);
    if (!entry) throw new SpecError(`unable to find group ${g}: no matching entries in group file`);
    return entry.gid;
  };
  const explicitGroup = groupPart !== undefined && groupPart !== "";
  if (explicitGroup) gid = groupId(groupPart);
  // Docker's (since 20.10.18): the primary group is a supplementary one too, so that a file's
  // group permissions cannot be escaped by dropping it; the user's memberships in /etc/group
  // count only when no group is named; then the GroupAdd groups.
  const extra = new Set<number>([gid]);
  if (name !== undefined && !explicitGroup) for (const g of groups) if (g.members.includes(name)) extra.add(g.gid);
  for (const g of groupAdd) extra.add(groupId(g));
  return { uid, gid, additionalGids: [...extra] };
}

// --- capabilities ------------------------------------------------------------------------------

function capName(raw: string): string {
  const up = raw.toUpperCase();
  if (up === "ALL") return up;
  const name = up.startsWith("CAP_") ? up : `CAP_${up}`;
  if (!ALL_CAPABILITIES.includes(name)) throw new SpecError(`unknown capability: "${raw}"`);
  return name;
}

/** The names of CapAdd or CapDrop; an unknown one refused, as Docker's daemon does, saying which list had it. */
function capNames(raw: readonly string[], list: string): string[] {
  try {
    return raw.map(capName);
  } catch (err) {
    if (err instanceof SpecError) throw new SpecError(`invalid ${list}: ${err.message}`);
    throw err;
  }
}

/** Why CapAdd or CapDrop cannot be honoured (a name that is no capability), as a create refuses it; undefined when they can. */
export function capabilitiesRefusal(capAdd: readonly string[] = [], capDrop: readonly string[] = []): string | undefined {
  try {
    capNames(capAdd, "CapAdd");
    capNames(capDrop, "CapDrop");
    return undefined;
  } catch (err) {
    if (err instanceof SpecError) return err.message;
    throw err;
  }
}

/**
 * The capabilities of the daemon's bounding set (what runc, its child, can give at all), from
 * `CapBnd` of /proc/self/status; every capability when it cannot be read.
 */
export function boundingCapabilities(status = "/proc/self/status"): string[] {
  try {
    const m = /^CapBnd:\s*([0-9a-f]+)$/m.exec(readFileSync(status, "utf8"));
    if (!m) return [...ALL_CAPABILITIES];
    const mask = BigInt(`0x${m[1]}`);
    return ALL_CAPABILITIES.filter((_, bit) => (mask >> BigInt(bit)) & 1n);
  } catch {
    return [...ALL_CAPABILITIES];
  }
}

/**
 * Docker's rules: ALL in CapAdd starts from every capability, ALL in CapDrop from none.
 * Privileged: every capability of the bounding set (as Docker does since 23.0: one the daemon
 * lacks, in a container of a container, would fail the start with "unable to apply caps").
 */
export function resolveCapabilities(capAdd: readonly string[] = [], capDrop: readonly string[] = [], privileged = false, bounding: readonly string[] = ALL_CAPABILITIES): string[] {
  // both lists are checked, a privileged container's too, as Docker's daemon checks them at create
  const add = capNames(capAdd, "CapAdd");
  const drop = capNames(capDrop, "CapDrop");
  if (privileged) return ALL_CAPABILITIES.filter((c) => bounding.includes(c));
  let caps: string[];
  // ALL is Docker's list of every capability as for a privileged container: the bounding set's
  // (one the daemon lacks, in a container of a container, would fail the start)
  if (add.includes("ALL")) caps = drop.includes("ALL") ? [] : ALL_CAPABILITIES.filter((c) => bounding.includes(c) && !drop.includes(c));
  else if (drop.includes("ALL")) caps = [...new Set(add)];
  else caps = [...DEFAULT_CAPABILITIES.filter((c) => !drop.includes(c)), ...add.filter((c) => !DEFAULT_CAPABILITIES.includes(c))];
  return ALL_CAPABILITIES.filter((c) => caps.includes(c));
}

// --- rlimits -----------------------------------------------------------------------------------

/** `--default-ulimit` values, each replaced by the container's own of the same name. */
function resolveRlimits(
  defaults: Record<string, ContainerUlimit>, own: readonly ContainerUlimit[] = [],
): { type: string; hard: number; soft: number }[] {
  const byName = new Map<string, ContainerUlimit>();
  for (const u of Object.values(defaults)) byName.set(u.Name, u);
  for (const u of own) byName.set(u.Name, u);
  // -1 stays -1 (unlimited) here: bundle.ts writes it as RLIM_INFINITY (2^64-1), which a JS
  // number cannot hold exactly.
  const limit = (n: number) => (n < 0 ? -1 : n);
  return [...byName.values()].map((u) => ({ type: `RLIMIT_${u.Name.toUpperCase()}`, hard: limit(u.Hard), soft: limit(u.Soft) }));
}

// --- security options --------------------------------------------------------------------------

/** A boolean option of SecurityOpt (`name`, `name=true`, `name:0`...): the last one given, else `otherwise`. */
function securityFlag(securityOpt: readonly string[], name: string, otherwise: boolean): boolean {
  let value = otherwise;
  for (const opt of securityOpt) {
    const m = new RegExp(`^${name}(?:[:=](1|t|T|TRUE|true|True|0|f|F|FALSE|false|False))?$`).exec(opt);
    if (m) value = m[1] === undefined || /^(1|t|T|TRUE|true|True)$/.test(m[1]);
  }
  return value;
}

/** `no-new-privileges` from SecurityOpt (`no-new-privileges`, `:true`, `=false`), else the daemon's. */
function resolveNoNewPrivileges(securityOpt: readonly string[], daemonDefault: boolean): boolean {
  return securityFlag(securityOpt, "no-new-privileges", daemonDefault);
}

/** A profile in Docker's form (archMap, names, includes/excludes) or the OCI form, as the OCI form. */
function toOciSeccomp(profile: Record<string, unknown>, caps: readonly string[], arch = process.arch): OciSeccomp {
  const p = profile as {
    defaultAction?: string; defaultErrnoRet?: number; architectures?: string[]; flags?: string[];
    archMap?: { architecture: string; subArchitectures?: string[] }[];
    syscalls?: {
      names?: string[]; name?: string; action: string; errnoRet?: number; args?: unknown[] | null;
      includes?: { caps?: string[]; arches?: string[] }; excludes?: { caps?: string[]; arches?: string[] };
    }[];
  };
  if (typeof p.defaultAction !== "string") throw new SpecError("seccomp profile has no defaultAction");
  const ours = seccompArchitectures(arch);
  const archWord = ours[0] === "SCMP_ARCH_X86_64" ? "amd64" : ours[0] === "SCMP_ARCH_AARCH64" ? "arm64" : arch;
  let architectures = p.architectures;
  if (!architectures && p.archMap) {
    const mine = p.archMap.find((a) => ours.includes(a.architecture));
    architectures = mine ? [mine.architecture, ...(mine.subArchitectures ?? [])] : [];
  }
  const hasCap = (c: string) => caps.includes(c.startsWith("CAP_") ? c : `CAP_${c}`);
  const syscalls = (p.syscalls ?? []).filter((s) => {
    if (s.includes?.caps && !s.includes.caps.every(hasCap)) return false;
    if (s.includes?.arches && !s.includes.arches.includes(archWord)) return false;
    if (s.excludes?.caps && s.excludes.caps.some(hasCap)) return false;
    if (s.excludes?.arches && s.excludes.arches.includes(archWord)) return false;
    return true;
  }).map((s) => ({
    names: s.names ?? (s.name ? [s.name] : []), action: s.action,
    ...(s.errnoRet !== undefined ? { errnoRet: s.errnoRet } : {}),
    ...(s.args && s.args.length > 0 ? { args: s.args as NonNullable<OciSeccomp["syscalls"]>[number]["args"] } : {}),
  }));
  return {
    defaultAction: p.defaultAction,
    ...(p.defaultErrnoRet !== undefined ? { defaultErrnoRet: p.defaultErrnoRet } : {}),
    architectures: architectures ?? [],
    ...(p.flags ? { flags: p.flags } : {}),
    syscalls,
  };
}

/** `seccomp=unconfined` or `seccomp=<profile JSON>` in SecurityOpt, else `--seccomp-profile` (builtin, unconfined, a path). */
function resolveSeccomp(securityOpt: readonly string[], daemonProfile: string, caps: readonly string[]): OciSeccomp | undefined {
  const own = [...securityOpt].reverse().find((o) => /^seccomp[:=]/.test(o));
  if (own !== undefined) {
    const value = own.slice("seccomp=".length);
    if (value === "unconfined") return undefined;
    if (value === "builtin") return builtinSeccompProfile();
    try {
      return toOciSeccomp(JSON.parse(value) as Record<string, unknown>, caps);
    } catch (err) {
      if (err instanceof SpecError) throw err;
      throw new SpecError(`seccomp security option is not a JSON profile: ${(err as Error).message}`);
    }
  }
  if (daemonProfile === "unconfined") return undefined;
  if (daemonProfile === "builtin" || daemonProfile === "") return builtinSeccompProfile();
  return toOciSeccomp(JSON.parse(readFileSync(daemonProfile, "utf8")) as Record<string, unknown>, caps);
}

// --- cgroups -----------------------------------------------------------------------------------

/**
 * cgroupfs: `<parent>/<id>`; a parent with a leading slash is from the root of each hierarchy,
 * one without is relative to the runtime's own cgroup (which it inherits from the daemon).
 * systemd: `<slice>:engine:<id>`, the parent being a slice name.
 */
function resolveCgroupsPath(ctx: Pick<SpecContext, "containerId" | "hostConfig" | "daemon" | "host">): string {
  const driver = cgroupDriverOf(ctx.daemon, ctx.host);
  const parent = ctx.hostConfig.CgroupParent || cgroupParentOf(ctx.daemon, ctx.host);
  if (driver === "systemd") {
    if (!/^[^/:]+\.slice$/.test(parent)) {
      throw new SpecError(`cgroup-parent for the systemd cgroup driver must be a slice name such as "engine.slice", not "${parent}"`);
    }
    return `${parent}:engine:${ctx.containerId}`;
  }
  const trimmed = parent.replace(/\/+$/, "");
  return trimmed === "" && parent.startsWith("/") ? `/${ctx.containerId}` : `${trimmed}/${ctx.containerId}`;
}

/**
 * Memory, CPU, block IO (per device too: block-io.ts) and pids limits from HostConfig;
 * devices: deny all, then the default allow list, then the rules of `--device` and
 * `--device-cgroup-rule` (all when privileged).
 */
function resolveResources(hc: SpecContext["hostConfig"], deviceRules: readonly OciDeviceRule[] = []): OciResources {
  const r: OciResources = {
    devices: hc.Privileged ? [{ allow: true, access: "rwm" }] : [{ allow: false, access: "rwm" }, ...DEFAULT_DEVICE_RULES.map((d) => ({ ...d })), ...deviceRules],
  };
  const memory: NonNullable<OciResources["memory"]> = {};
  if (hc.Memory && hc.Memory > 0) memory.limit = hc.Memory;
  if (hc.MemoryReservation && hc.MemoryReservation > 0) memory.reservation = hc.MemoryReservation;
  if (hc.MemorySwap && hc.MemorySwap !== 0) {
    if (!memory.limit) throw new SpecError("you should always set the memory limit when using the memoryswap limit");
    if (hc.MemorySwap > 0 && hc.MemorySwap < memory.limit) throw new SpecError("minimum memoryswap limit should be larger than memory limit");
    memory.swap = hc.MemorySwap;
  }
  if (hc.OomKillDisable) memory.disableOOMKiller = true;
  // -1 (and null) leave the kernel's; the create refused what is out of [0, 100]
  if (typeof hc.MemorySwappiness === "number" && hc.MemorySwappiness >= 0) memory.swappiness = hc.MemorySwappiness;
  if (Object.keys(memory).length > 0) r.memory = memory;
  const cpu: NonNullable<OciResources["cpu"]> = {};
  if (hc.CpuShares && hc.CpuShares > 0) cpu.shares = hc.CpuShares;
  if (hc.NanoCpus && hc.NanoCpus > 0) {
    if ((hc.CpuQuota ?? 0) > 0 || (hc.CpuPeriod ?? 0) > 0) {
      throw new SpecError("conflicting options: Nano CPUs and CPU Period cannot both be set");
    }
    cpu.period = 100_000;
    cpu.quota = Math.round((hc.NanoCpus * cpu.period) / 1e9);
  } else {
    if (hc.CpuQuota && hc.CpuQuota > 0) cpu.quota = hc.CpuQuota;
    if (hc.CpuPeriod && hc.CpuPeriod > 0) cpu.period = hc.CpuPeriod;
  }
  // the create refused them where the kernel has no real-time group scheduling (create-checks.ts)
  if (hc.CpuRealtimeRuntime && hc.CpuRealtimeRuntime > 0) cpu.realtimeRuntime = hc.CpuRealtimeRuntime;
  if (hc.CpuRealtimePeriod && hc.CpuRealtimePeriod > 0) cpu.realtimePeriod = hc.CpuRealtimePeriod;
  if (hc.CpusetCpus) cpu.cpus = hc.CpusetCpus;
  if (hc.CpusetMems) cpu.mems = hc.CpusetMems;
  if (Object.keys(cpu).length > 0) r.cpu = cpu;
  if (hc.PidsLimit !== undefined && hc.PidsLimit !== null && hc.PidsLimit > 0) r.pids = { limit: hc.PidsLimit };
  // the create dropped what the kernel cannot apply (with Docker's warnings)
  const blockIO = resolveBlockIo(hc);
  if (blockIO) r.blockIO = blockIO;
  return r;
}

// --- mounts and namespaces ---------------------------------------------------------------------

/**
 * Docker's standard mounts; /dev/shm sized by ShmSize, else `--default-shm-size`. The cgroup
 * file system is writable for a privileged container and with `--security-opt writable-cgroups`.
 */
export function standardMounts(opts: { shmSize: number; privileged: boolean; ipcMode: string; writableCgroups?: boolean }): OciMount[] {
  const ro = opts.privileged ? "rw" : "ro";
  const cgroupRo = opts.privileged || opts.writableCgroups ? "rw" : "ro";
  const mounts: OciMount[] = [
    { destination: "/proc", type: "proc", source: "proc", options: ["nosuid", "noexec", "nodev"] },
    { destination: "/dev", type: "tmpfs", source: "tmpfs", options: ["nosuid", "strictatime", "mode=755", "size=65536k"] },
    { destination: "/dev/pts", type: "devpts", source: "devpts", options: ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"] },
    { destination: "/sys", type: "sysfs", source: "sysfs", options: ["nosuid", "noexec", "nodev", ro] },
    { destination: "/sys/fs/cgroup", type: "cgroup", source: "cgroup", options: [cgroupRo, "nosuid", "noexec", "nodev"] },
    { destination: "/dev/mqueue", type: "mqueue", source: "mqueue", options: ["nosuid", "noexec", "nodev"] },
  ];
  if (opts.ipcMode.startsWith("container:")) {
    // the other container's /dev/shm: added with its namespace (host/containers/shared-namespaces.ts)
  } else if (opts.ipcMode === "host") {
    mounts.push({ destination: "/dev/shm", type: "bind", source: "/dev/shm", options: ["rbind", "nosuid", "noexec", "nodev"] });
  } else if (opts.ipcMode !== "none") {
    mounts.push({ destination: "/dev/shm", type: "tmpfs", source: "shm", options: ["nosuid", "noexec", "nodev", "mode=1777", `size=${opts.shmSize}`] });
  }
  return mounts;
}

const IPC_MODES = ["private", "shareable", "host", "none"];

function resolveNamespaces(ctx: SpecContext, ipcMode: string): OciNamespace[] {
  const hc = ctx.hostConfig;
  const ns: OciNamespace[] = [{ type: "mount" }];
  if (hc.PidMode !== "host") ns.push({ type: "pid" });
  if (ipcMode !== "host") ns.push({ type: "ipc" });
  if (hc.UTSMode !== "host") ns.push({ type: "uts" });
  // Always a fresh, empty network namespace here: the network plugin sets its path (or removes
  // it for `host`) in the processSpec waterfall.
  ns.push({ type: "network" });
  const cgroupns = hc.CgroupnsMode || ctx.daemon["default-cgroupns-mode"];
  if (cgroupns === "private") ns.push({ type: "cgroup" });
  // --userns-remap: a user namespace with the daemon's map (the network plugin may name one to join)
  if (ctx.idMap) ns.push({ type: "user" });
  return ns;
}

// --- the spec ----------------------------------------------------------------------------------

/**
 * The spec's sysctls: the request's, over what Docker sets itself:
 * - the NIS domain name as `kernel.domainname` (runc before 1.2 ignores the spec's own
 *   `domainname`; the sysctl has the effect of setdomainname(2) in the container's UTS namespace);
 * - in a network namespace of the container's own (a Docker container's mode: not the host's,
 *   not another container's; a CRI container has no mode and joins its pod's), every port
 *   unprivileged (`net.ipv4.ip_unprivileged_port_start` 0) and, outside a remapped user
 *   namespace (where the kernel cannot set it up), ICMP echo sockets for every group
 *   (`net.ipv4.ping_group_range`: ping without CAP_NET_RAW), as Docker's daemon does.
 */
function sysctlsOf(hc: SpecContext["hostConfig"], domainname: string | undefined, remapped: boolean): { sysctl?: Record<string, string> } {
  const mode = hc.NetworkMode ?? "";
  const ownNetns = mode !== "" && mode !== "host" && !mode.startsWith("container:");
  const sysctl = {
    ...(domainname ? { "kernel.domainname": domainname } : {}),
    ...(ownNetns && !remapped ? { "net.ipv4.ping_group_range": "0 2147483647" } : {}),
    ...(ownNetns ? { "net.ipv4.ip_unprivileged_port_start": "0" } : {}),
    ...(hc.Sysctls ?? {}),
  };
  return Object.keys(sysctl).length || hc.Sysctls ? { sysctl } : {};
}

/** The complete base config.json of a container. Throws SpecError for a request it cannot honour. */
export function baseSpec(ctx: SpecContext): OciSpec {
  const hc = ctx.hostConfig;
  const cfg = ctx.config;
  const privileged = hc.Privileged === true;
  const securityOpt = hc.SecurityOpt ?? [];
  const hostname = cfg.Hostname || ctx.containerId.slice(0, 12);
  const ipcMode = hc.IpcMode || ctx.daemon["default-ipc-mode"];
  if (!IPC_MODES.includes(ipcMode) && !ipcMode.startsWith("container:")) throw new SpecError(`ipc mode "${ipcMode}" is not supported (${IPC_MODES.join(", ")})`);
  const caps = resolveCapabilities(hc.CapAdd ?? [], hc.CapDrop ?? [], privileged, privileged || (hc.CapAdd ?? []).some((c) => c.toUpperCase() === "ALL") ? boundingCapabilities() : ALL_CAPABILITIES);
  const labels = { ...(ctx.imageConfig.Labels ?? {}), ...(cfg.Labels ?? {}), ...(hc.Annotations ?? {}) };
  const devices = resolveDevices(hc);
  const spec: OciSpec = {
    ociVersion: OCI_VERSION,
    process: {
      terminal: cfg.Tty === true,
      ...(cfg.Tty && hc.ConsoleSize && hc.ConsoleSize[0] > 0 && hc.ConsoleSize[1] > 0
        ? { consoleSize: { height: hc.ConsoleSize[0], width: hc.ConsoleSize[1] } }
        : {}),
      user: resolveUser(ctx.rootfs, cfg.User || ctx.imageConfig.User, hc.GroupAdd ?? []),
      args: resolveArgs(ctx),
      env: resolveEnv(ctx, hostname),
      cwd: cfg.WorkingDir || ctx.imageConfig.WorkingDir || "/",
      capabilities: { bounding: [...caps], effective: [...caps], permitted: [...caps] },
      rlimits: resolveRlimits(ctx.daemon["default-ulimit"], hc.Ulimits ?? []),
      noNewPrivileges: resolveNoNewPrivileges(securityOpt, ctx.daemon["no-new-privileges"]),
      // always, as Docker writes it: 0 is not left to what the runtime inherits
      oomScoreAdj: hc.OomScoreAdj ?? 0,
    },
    root: { path: ctx.rootfs, readonly: hc.ReadonlyRootfs === true },
    // in the host's UTS namespace the name is the host's: Docker writes none (runc refuses one there)
    ...(hc.UTSMode === "host" ? {} : { hostname }),
    ...(cfg.Domainname ? { domainname: cfg.Domainname } : {}),
    mounts: standardMounts({
      shmSize: hc.ShmSize && hc.ShmSize > 0 ? hc.ShmSize : ctx.daemon["default-shm-size"],
      privileged,
      ipcMode,
      writableCgroups: securityFlag(securityOpt, "writable-cgroups", false),
    }),
    annotations: Object.fromEntries(Object.entries(labels).map(([k, v]) => [k, String(v)])),
    linux: {
      namespaces: resolveNamespaces(ctx, ipcMode),
      cgroupsPath: resolveCgroupsPath(ctx),
      ...(devices.devices.length > 0 ? { devices: devices.devices } : {}),
      resources: resolveResources(hc, devices.rules),
      ...(privileged ? {} : { maskedPaths: [...(hc.MaskedPaths ?? DEFAULT_MASKED_PATHS)], readonlyPaths: [...(hc.ReadonlyPaths ?? DEFAULT_READONLY_PATHS)] }),
      ...sysctlsOf(hc, hc.UTSMode === "host" ? undefined : cfg.Domainname, !!ctx.idMap),
      ...(ctx.idMap ? { uidMappings: ctx.idMap.uids.map((r) => ({ ...r })), gidMappings: ctx.idMap.gids.map((r) => ({ ...r })) } : {}),
    },
  };
  // a privileged container runs without the daemon's profile, but one of its own, given with
  // `--security-opt seccomp=<profile>`, applies, as Docker's daemon applies it (moby's WithSeccomp)
  if (!privileged || securityOpt.some((o) => /^seccomp[:=]/.test(o))) {
    const seccomp = resolveSeccomp(securityOpt, ctx.daemon["seccomp-profile"], caps);
    if (seccomp) spec.linux!.seccomp = seccomp;
  }
  // the --tmpfs mounts replace the runtime's own at their places (the binds and volumes do the
  // same in their processSpec tap, host/volumes)
  const tmpfs = Object.entries(hc.Tmpfs ?? {});
  const replaced = replacedByUserMounts(new Set(tmpfs.map(([dest]) => posix.normalize(dest).replace(/(.)\/+$/, "$1"))), ipcMode);
  spec.mounts = spec.mounts!.filter((m) => !replaced(m.destination));
  for (const [dest, options] of tmpfs) {
    spec.mounts.push({ destination: dest, type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev", "noexec", ...options.split(",").filter(Boolean)] });
  }
  if (hc.Init ?? ctx.daemon.init) applyInit(spec, ctx.daemon["init-path"]);
  return spec;
}
