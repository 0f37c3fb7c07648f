/**
 * The host devices of a container's OCI spec, as Docker gives them: `HostConfig.Devices`
 * (`--device /dev/x[:/dev/y][:rwm]`) as device nodes with a device cgroup rule each,
 * `DeviceCgroupRules` (`--device-cgroup-rule 'c 42:* rmw'`) as rules, and every device of the
 * host's /dev for a privileged container. Reads the host's device nodes; writes nothing. A
 * device that is missing, or a path that holds none, fails the start (500), as with Docker.
 */
import { lstatSync, readdirSync, statSync, type BigIntStats } from "node:fs";
import { posix } from "node:path";
import type { HostDevice } from "../../core/containers/container-config.js";
import type { OciDeviceRule, OciLinux } from "../../core/contracts/runtime.js";
import { errors } from "../../core/errors.js";

export type OciDevice = NonNullable<OciLinux["devices"]>[number];

/** Linux's dev_t: the major in bits 8-19 and 32-63, the minor in bits 0-7 and 20-63. */
export function majorMinor(rdev: bigint): { major: number; minor: number } {
  return {
    major: Number(((rdev >> 8n) & 0xfffn) | ((rdev >> 32n) & ~0xfffn)),
    minor: Number((rdev & 0xffn) | ((rdev >> 12n) & ~0xffn)),
  };
}

/** A device node at `path` in the container, from the host's node `st`; undefined when `st` is no char or block device. */
function deviceOf(st: BigIntStats, path: string): OciDevice | undefined {
  const type = st.isCharacterDevice() ? "c" : st.isBlockDevice() ? "b" : undefined;
  if (!type) return undefined;
  return { path, type, ...majorMinor(st.rdev), fileMode: Number(st.mode & 0o7777n), uid: Number(st.uid), gid: Number(st.gid) };
}

const ruleOf = (d: OciDevice, access: string): OciDeviceRule => ({ allow: true, type: d.type as "c" | "b", major: d.major, minor: d.minor, access });

/** Every device node under `dir` (symbolic links not followed), each at its path with `dir` replaced by `dest`. */
function walk(dir: string, dest: string, skip: (name: string, full: string) => boolean = () => false): OciDevice[] {
  const out: OciDevice[] = [];
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return out;
  }
  for (const name of names) {
    const full = posix.join(dir, name);
    if (skip(name, full)) continue;
    let st: BigIntStats;
    try {
      st = lstatSync(full, { bigint: true });
    } catch {
      continue; // gone meanwhile
    }
    if (st.isDirectory()) out.push(...walk(full, posix.join(dest, name), skip));
    else {
      const d = deviceOf(st, posix.join(dest, name));
      if (d) out.push(d);
    }
  }
  return out;
}

/**
 * One `--device`: a device node (a symbolic link to one is followed), or a folder whose device
 * nodes all come, under PathInContainer. The rules give each CgroupPermissions.
 */
function devicesFromPath(m: HostDevice, permissions = m.CgroupPermissions ?? "rwm"): { devices: OciDevice[]; rules: OciDeviceRule[] } {
  const host = m.PathOnHost;
  const dest = m.PathInContainer || host;
  let st: BigIntStats;
  try {
    st = statSync(host, { bigint: true });
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file or directory" : (err as Error).message;
    throw errors.containerDeviceUnavailable(host, why);
  }
  const one = deviceOf(st, dest);
  const devices = one ? [one] : st.isDirectory() ? walk(host, dest) : [];
  if (devices.length === 0) throw errors.containerDeviceUnavailable(host, "not a device node");
  return { devices, rules: devices.map((d) => ruleOf(d, permissions)) };
}

const RULE = /^([acb]) ([0-9]+|\*):([0-9]+|\*) ([rwm]{1,3})$/;

/** One `--device-cgroup-rule` (`c 1:3 rwm`, `b *:* r`, `a *:* rwm`); `*` is -1 in the spec, as Docker writes it. */
function parseCgroupRule(rule: string): OciDeviceRule {
  const m = RULE.exec(rule);
  if (!m) throw errors.containerDeviceRuleInvalid(rule);
  const num = (s: string) => (s === "*" ? -1 : Number(s));
  return { allow: true, type: m[1] as "a" | "b" | "c", major: num(m[2]), minor: num(m[3]), access: m[4] };
}

/** Folders and nodes of the host's /dev a privileged container does not get (runc's list). */
const HOST_DEV_SKIP = new Set(["pts", "shm", "fd", "mqueue", ".lxc", ".lxd-mounts", ".udev"]);

/** Every char and block device of the host's /dev, at the same path. */
function hostDevices(root = "/dev"): OciDevice[] {
  return walk(root, "/dev", (name, full) => (posix.dirname(full) === root && HOST_DEV_SKIP.has(name)) || full === `${root}/console`);
}

/**
 * The device nodes and cgroup rules a container adds to the defaults. Privileged: the host's
 * devices, and those of `--device` at another path (their permissions are rwm); its cgroup
 * allows every device anyway. Otherwise each `--device` with its permissions, then each rule.
 */
export function resolveDevices(hc: { Privileged?: boolean; Devices?: HostDevice[] | null; DeviceCgroupRules?: string[] | null }): { devices: OciDevice[]; rules: OciDeviceRule[] } {
  const devices: OciDevice[] = [];
  const rules: OciDeviceRule[] = [];
  if (hc.Privileged) {
    devices.push(...hostDevices());
    for (const m of hc.Devices ?? []) {
      if (m.PathOnHost === m.PathInContainer) continue; // /dev is the host's already
      devices.push(...devicesFromPath(m, "rwm").devices);
    }
    return { devices, rules };
  }
  for (const m of hc.Devices ?? []) {
    const found = devicesFromPath(m);
    devices.push(...found.devices);
    rules.push(...found.rules);
  }
  for (const r of hc.DeviceCgroupRules ?? []) rules.push(parseCgroupRule(r));
  return { devices, rules };
}
