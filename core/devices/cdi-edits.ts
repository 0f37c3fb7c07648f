/**
 * Applies CDI `containerEdits` to a container's OCI spec, the way the CDI library does:
 * - env: appended to the process's environment, a name already there replaced;
 * - deviceNodes: type, major and minor filled from the host device (lstat) when the spec leaves
 *   them out; the node added to `linux.devices` (one already at that path replaced), owned by
 *   the process's uid/gid unless the spec says; a `b`/`c` node also gets a device cgroup rule
 *   allowing it (`rwm` unless the spec's permissions say otherwise, `none` for no access);
 * - mounts: added (one already at that destination replaced), then every mount sorted by the
 *   depth of its destination, parents first;
 * - hooks: added to the OCI hook list of their name;
 * - additionalGids: added to the process's supplementary groups (0 ignored);
 * - intelRdt: set as the container's resctrl settings.
 * Reads the host's device nodes; writes nothing.
 */
import { lstatSync } from "node:fs";
import { posix } from "node:path";
import type { OciMount, OciSpec } from "../contracts/runtime.js";
import type { CdiContainerEdits, CdiDeviceNode } from "./cdi-spec.js";

interface OciHook {
  path: string;
  args?: string[];
  env?: string[];
  timeout?: number;
}

interface FilledNode {
  path: string;
  type: string;
  major: number;
  minor: number;
}

/** The type, major and minor of a device node on the host (the CDI library's rules). */
function hostDeviceInfo(path: string): { type: "b" | "c" | "p"; major: number; minor: number } {
  const st = lstatSync(path, { bigint: true });
  const type = st.isBlockDevice() ? "b" : st.isCharacterDevice() ? "c" : st.isFIFO() ? "p" : undefined;
  if (!type) throw new Error(`${path} is not a device node`);
  // Linux's dev_t: the major in bits 8-19 and 32-63, the minor in bits 0-7 and 20-63.
  const rdev = st.rdev;
  const major = Number(((rdev >> 8n) & 0xfffn) | ((rdev >> 32n) & ~0xfffn));
  const minor = Number((rdev & 0xffn) | ((rdev >> 12n) & ~0xffn));
  return { type, major, minor };
}

function fillNode(node: CdiDeviceNode): FilledNode {
  const hostPath = node.hostPath || node.path;
  const given = { path: node.path, type: node.type ?? "", major: node.major ?? 0, minor: node.minor ?? 0 };
  if (given.type !== "" && (given.major !== 0 || given.type === "p")) return given;
  let host: ReturnType<typeof hostDeviceInfo>;
  try {
    host = hostDeviceInfo(hostPath);
  } catch (err) {
    throw new Error(`failed to stat CDI host device "${hostPath}": ${(err as Error).message}`);
  }
  const sameType = given.type === host.type || (given.type === "u" && host.type === "c");
  if (given.type !== "" && !sameType) {
    throw new Error(`CDI device ${node.path} (host ${hostPath}) is of type ${given.type} in the spec but ${host.type} on the host`);
  }
  const type = given.type || host.type;
  return given.major === 0 && type !== "p" ? { path: node.path, type, major: host.major, minor: host.minor } : { ...given, type };
}

const envName = (entry: string) => (entry.includes("=") ? entry.slice(0, entry.indexOf("=")) : entry);

function setEnv(env: string[], entries: readonly string[]): string[] {
  const out = [...env];
  for (const entry of entries) {
    const at = out.findIndex((e) => envName(e) === envName(entry));
    if (at >= 0) out[at] = entry;
    else out.push(entry);
  }
  return out;
}

const depth = (m: OciMount) => posix.normalize(m.destination).split("/").length - 1;

/** Applies `edits` in order (a spec's own edits, then each device's) and returns the spec. */
export function applyCdiEdits(spec: OciSpec, edits: readonly CdiContainerEdits[]): OciSpec {
  const linux = (spec.linux ??= {});
  const user = spec.process?.user;
  for (const e of edits) {
    if (e.env?.length && spec.process) spec.process.env = setEnv(spec.process.env ?? [], e.env);
    for (const node of e.deviceNodes ?? []) {
      const filled = fillNode(node);
      const device = {
        ...filled,
        ...(node.fileMode !== undefined ? { fileMode: node.fileMode } : {}),
        ...(node.uid !== undefined ? { uid: node.uid } : user && user.uid > 0 ? { uid: user.uid } : {}),
        ...(node.gid !== undefined ? { gid: node.gid } : user && user.gid > 0 ? { gid: user.gid } : {}),
      };
      linux.devices = [...(linux.devices ?? []).filter((d) => d.path !== device.path), device];
      if (device.type === "b" || device.type === "c") {
        const perms = node.permissions ?? "";
        const access = perms === "" ? "rwm" : perms === "none" ? "" : perms;
        const resources = (linux.resources ??= {});
        (resources.devices ??= []).push({ allow: true, type: device.type, major: device.major, minor: device.minor, access });
      }
    }
    if (e.mounts?.length) {
      let mounts = spec.mounts ?? [];
      for (const m of e.mounts) {
        mounts = mounts.filter((x) => x.destination !== m.containerPath);
        mounts.push({
          destination: m.containerPath,
          source: m.hostPath,
          ...(m.type ? { type: m.type } : {}),
          ...(m.options ? { options: [...m.options] } : {}),
        });
      }
      // Array.prototype.sort is stable: mounts of one depth keep their order.
      spec.mounts = mounts.sort((a, b) => depth(a) - depth(b));
    }
    if (e.hooks?.length) {
      const hooks = (spec.hooks ?? {}) as Record<string, OciHook[]>;
      spec.hooks = hooks;
      for (const h of e.hooks) {
        (hooks[h.hookName] ??= []).push({
          path: h.path,
          ...(h.args ? { args: [...h.args] } : {}),
          ...(h.env ? { env: [...h.env] } : {}),
          ...(h.timeout !== undefined ? { timeout: h.timeout } : {}),
        });
      }
    }
    for (const gid of e.additionalGids ?? []) {
      if (gid === 0 || !user) continue;
      const gids = (user.additionalGids ??= []);
      if (!gids.includes(gid)) gids.push(gid);
    }
    if (e.intelRdt) linux.intelRdt = { ...e.intelRdt };
  }
  return spec;
}
