/**
 * Reads a create request's mounts the way Docker's Linux parser does: `HostConfig.Binds`
 * (`/host:/ctr[:mode]`, `name:/ctr[:mode]`, `/ctr`), `HostConfig.Mounts` (bind, volume,
 * tmpfs), `HostConfig.Tmpfs` (only for conflicts: the runtime mounts those) and the
 * `Config.Volumes` of the image and the request (anonymous volumes where nothing else is
 * mounted). Pure: it checks and resolves, and touches nothing but `existsSync` for a `--mount`
 * bind's source. Every refusal is a 400 naming what is wrong.
 */
import { existsSync } from "node:fs";
import { posix } from "node:path";
import type { HostConfig } from "../../core/containers/container-config.js";
import type { ContainerMount, MountRequest } from "../../core/containers/mount-point.js";
import { errors } from "../../core/errors.js";
import { isLocalSubpath } from "./volume-subpath.js";

/**
 * A mount as planned: a volume without `Name` is anonymous, made at create; a volume's
 * `Driver` of "" takes an existing volume's driver, else `local`.
 */
export interface PlannedMount extends ContainerMount {
  /** volume: how to create it when it does not exist yet. */
  create?: {
    options: Record<string, string>;
    labels: Record<string, string>;
    /**
     * A volume the request's Binds or Mounts name (not the image's): with the local driver and no
     * mode it is recorded with mode `z`, as Docker's daemon records it (its setBindModeIfNull), so
     * inspect's `Mounts[].Mode` reads alike. Nothing is relabelled: the mode is only shown.
     */
    defaultModeZ?: boolean;
  };
}

export const VOLUME_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]+$/;
const PROPAGATIONS = ["private", "rprivate", "shared", "rshared", "slave", "rslave"];
const MODE_GROUPS: string[][] = [["rw", "ro"], ["z", "Z"], PROPAGATIONS, ["nocopy"], ["consistent", "cached", "delegated"]];
const DEFAULT_PROPAGATION = "rprivate";

/**
 * Every mount of a container, conflicts refused; `configVolumes` are the image's and the
 * request's `Config.Volumes` keys. `inherited` (VolumesFrom's) come first, as Docker takes them:
 * a bind or mount at the same destination replaces one, and an image volume does not.
 */
export function planMounts(
  hc: HostConfig,
  configVolumes: readonly string[],
  inherited: readonly PlannedMount[] = [],
  options: { readOnlyBindsNonRecursive?: boolean; daemonRoot?: string } = {},
): PlannedMount[] {
  const planned: PlannedMount[] = [];
  const taken = new Set<string>(Object.keys(hc.Tmpfs ?? {}).map(cleanTarget));
  const add = (m: PlannedMount) => {
    if (taken.has(m.Destination)) throw errors.mountDuplicate(m.Destination);
    taken.add(m.Destination);
    planned.push(m);
  };
  // a client before API 1.44 has its read-only binds read-only at their top only, as they all were then
  const olderReadOnly = (m: PlannedMount): PlannedMount =>
    options.readOnlyBindsNonRecursive && m.Type === "bind" && !m.RW ? { ...m, ReadOnlyNonRecursive: true } : m;
  const bind = (m: PlannedMount): PlannedMount => {
    if (m.Type !== "bind") return m;
    const propagation = bindPropagationOf(m, options.daemonRoot);
    return { ...olderReadOnly(m), Propagation: propagation, ...(m.Propagation === "" && propagation === "rslave" ? { DaemonRootSlave: true } : {}) };
  };
  for (const raw of hc.Binds ?? []) add(bind(parseBind(raw, hc.VolumeDriver ?? "")));
  for (const m of hc.Mounts ?? []) add(bind(parseMount(m)));
  for (const m of inherited) {
    if (taken.has(m.Destination)) continue;
    taken.add(m.Destination);
    planned.push(m);
  }
  // The image's (and `-v /path`'s) volumes fill only what nothing else mounts.
  for (const target of configVolumes) {
    const dest = cleanTarget(target);
    if (!dest.startsWith("/") || dest === "/" || taken.has(dest)) continue;
    taken.add(dest);
    planned.push(volumeMount(undefined, dest, { driver: hc.VolumeDriver ?? "", rw: true, copy: true, mode: "" }));
  }
  return planned;
}

function cleanTarget(p: string): string {
  return posix.normalize(p.replace(/\\/g, "/")).replace(/(.)\/+$/, "$1");
}

function checkTarget(type: string, target: string | undefined): string {
  if (!target) throw errors.mountInvalidConfig(type, "field Target must not be empty");
  const dest = cleanTarget(target);
  if (dest === "/") throw errors.mountInvalidConfig(type, "invalid specification: destination can't be '/'");
  if (!target.startsWith("/")) throw errors.mountInvalidConfig(type, `invalid mount path: '${target}' mount path must be absolute`);
  return dest;
}

/** A `Binds` (and VolumesFrom) mode: comma-separated options, at most one of each group. */
export function validMode(mode: string): boolean {
  if (mode === "") return true;
  const counts = MODE_GROUPS.map(() => 0);
  for (const o of mode.split(",")) {
    const g = MODE_GROUPS.findIndex((group) => group.includes(o));
    if (g < 0) return false;
    counts[g]++;
  }
  return counts.every((n) => n <= 1);
}

/**
 * A VolumesFrom mode: as a bind's, but with no propagation and no copy mode (the mounts keep those
 * of the container they come from), as Docker's parseVolumesFrom refuses them.
 */
export function validVolumesFromMode(mode: string): boolean {
  return validMode(mode) && !mode.split(",").some((o) => o === "nocopy" || PROPAGATIONS.includes(o));
}

function volumeMount(name: string | undefined, dest: string, o: { driver: string; rw: boolean; copy: boolean; mode: string; options?: Record<string, string>; labels?: Record<string, string>; requested?: boolean }): PlannedMount {
  return {
    Type: "volume",
    ...(name ? { Name: name } : {}),
    Source: "",
    Destination: dest,
    Driver: o.driver,
    Mode: o.mode,
    RW: o.rw,
    Propagation: "",
    CopyData: o.copy,
    ...(name ? {} : { Anonymous: true }),
    create: { options: o.options ?? {}, labels: o.labels ?? {}, ...(o.requested ? { defaultModeZ: true } : {}) },
  };
}

/** One `Binds` entry. */
function parseBind(raw: string, volumeDriver: string): PlannedMount {
  const parts = raw.split(":");
  if (parts[0] === "" || parts.length > 3) throw errors.mountInvalidSpec(raw);
  let source = "";
  let target: string;
  let mode = "";
  if (parts.length === 1) target = parts[0];
  else if (parts.length === 2) {
    // `/foo:rw` is a target with a mode and no source: not a valid bind
    if (validMode(parts[1])) throw errors.mountInvalidSpec(raw);
    [source, target] = parts;
  } else [source, target, mode] = parts;
  if (!validMode(mode)) throw errors.mountInvalidMode(mode);
  const opts = mode === "" ? [] : mode.split(",");
  const type = source.startsWith("/") ? "bind" : "volume";
  let dest: string;
  try {
    dest = checkTarget(type, target);
  } catch (err) {
    throw errors.mountInvalidSpec(raw, (err as Error).message);
  }
  const rw = !opts.includes("ro");
  // a copy mode is a volume's option, a propagation a bind's: Docker's parser refuses the other type's
  const foreignField = type === "bind" ? (opts.includes("nocopy") ? "VolumeOptions" : "") : opts.some((o) => PROPAGATIONS.includes(o)) ? "BindOptions" : "";
  if (foreignField) throw errors.mountInvalidSpec(raw, errors.mountInvalidConfig(type, `field ${foreignField} must not be specified`).message);
  if (type === "bind") {
    return {
      Type: "bind", Source: cleanTarget(source), Destination: dest, Mode: mode, RW: rw,
      // (none asked: bindPropagationOf decides)
      Propagation: opts.find((o) => PROPAGATIONS.includes(o)) ?? "", CreateSource: true,
    };
  }
  if (source !== "" && !VOLUME_NAME.test(source)) throw errors.volumeInvalidName(source);
  return volumeMount(source || undefined, dest, { driver: volumeDriver, rw, copy: !opts.includes("nocopy"), mode, requested: true });
}

/**
 * A bind's propagation: the one asked for, else `rprivate`; but a bind of (or above) the daemon's
 * data root receives its unmounts (`rslave`, or `rshared` when asked), as Docker's daemon makes
 * it (its validateBindDaemonRoot), so that a container's copy of the root never holds the mounts
 * of other containers busy; another mode asked for there is refused. The paths are compared as
 * strings, as there.
 */
function bindPropagationOf(m: PlannedMount, daemonRoot: string | undefined): string {
  const asked = m.Propagation;
  if (!daemonRoot || !(m.Source.startsWith(daemonRoot) || daemonRoot.startsWith(m.Source))) return asked || DEFAULT_PROPAGATION;
  if (asked === "") return "rslave";
  if (asked === "rslave" || asked === "rshared") return asked;
  throw errors.mountDaemonRootPropagation(daemonRoot, m.Source, asked);
}

/** One `Mounts` entry (`--mount`). */
function parseMount(m: MountRequest): PlannedMount {
  const type = m.Type ?? "";
  if (!["bind", "volume", "tmpfs", "image"].includes(type)) {
    throw errors.mountInvalidConfig(type, type === "npipe" || type === "cluster" ? `mount type ${type} is not supported by this engine` : "mount type unknown");
  }
  const dest = checkTarget(type, m.Target);
  const rw = m.ReadOnly !== true;
  const extra = (field: string) => errors.mountInvalidConfig(type, `field ${field} must not be specified`);
  if (m.ImageOptions && type !== "image") throw extra("ImageOptions");
  if (type === "image") {
    // an image's root filesystem, read-only whatever ReadOnly says (its ID and layer: ContainerVolumes.realize)
    if (!m.Source) throw errors.mountInvalidConfig(type, "field Source must not be empty");
    for (const field of ["BindOptions", "VolumeOptions", "TmpfsOptions"] as const) if (m[field]) throw extra(field);
    const subpath = m.ImageOptions?.Subpath;
    if (subpath && !isLocalSubpath(subpath)) throw errors.mountInvalidConfig(type, "subpath must be a relative path within the volume");
    return { Type: "image", Name: m.Source, Source: "", Destination: dest, Mode: "", RW: false, Propagation: DEFAULT_PROPAGATION, ...(subpath ? { Subpath: subpath } : {}) };
  }
  if (type === "bind") {
    if (!m.Source) throw errors.mountInvalidConfig(type, "field Source must not be empty");
    if (m.VolumeOptions) throw extra("VolumeOptions");
    if (m.TmpfsOptions) throw extra("TmpfsOptions");
    if (!m.Source.startsWith("/")) throw errors.mountInvalidConfig(type, `invalid mount path: '${m.Source}' mount path must be absolute`);
    const b = m.BindOptions ?? {};
    if (b.Propagation && !PROPAGATIONS.includes(b.Propagation)) throw errors.mountInvalidConfig(type, `invalid propagation mode: ${b.Propagation}`);
    const source = cleanTarget(m.Source);
    if (!b.CreateMountpoint && !existsSync(source)) throw errors.mountInvalidConfig(type, `bind source path does not exist: ${source}`);
    // conflicting read-only modes, in the words Docker's daemon has for them (at its start; here at create)
    const conflict = rw
      ? (["ReadOnlyNonRecursive", "ReadOnlyForceRecursive"] as const).find((o) => b[o])
      : b.ReadOnlyNonRecursive && b.ReadOnlyForceRecursive
        ? "ReadOnlyNonRecursive && ReadOnlyForceRecursive"
        : undefined;
    if (conflict) throw errors.mountInvalidConfig(type, `options conflict: ${rw ? `Writable && ${conflict}` : conflict}`);
    return {
      Type: "bind", Source: source, Destination: dest, Mode: "", RW: rw, Propagation: b.Propagation ?? "",
      ...(b.CreateMountpoint ? { CreateSource: true } : {}),
      ...(b.NonRecursive ? { NonRecursive: true } : {}),
      ...(b.ReadOnlyNonRecursive ? { ReadOnlyNonRecursive: true } : {}),
      ...(b.ReadOnlyForceRecursive ? { ReadOnlyForceRecursive: true } : {}),
    };
  }
  if (type === "volume") {
    if (m.BindOptions) throw extra("BindOptions");
    if (m.TmpfsOptions) throw extra("TmpfsOptions");
    const v = m.VolumeOptions ?? {};
    if (v.Subpath) {
      if (!m.Source) throw errors.mountInvalidConfig(type, "must not set Subpath when using anonymous volumes");
      if (!isLocalSubpath(v.Subpath)) throw errors.mountInvalidConfig(type, "subpath must be a relative path within the volume");
    }
    if (m.ReadOnly && !m.Source) throw errors.mountInvalidConfig(type, "must not set ReadOnly mode when using anonymous volumes");
    if (m.Source && !VOLUME_NAME.test(m.Source)) throw errors.volumeInvalidName(m.Source);
    return {
      ...volumeMount(m.Source || undefined, dest, {
        driver: v.DriverConfig?.Name ?? "", rw, copy: !v.NoCopy, mode: "",
        options: v.DriverConfig?.Options ?? {}, labels: v.Labels ?? {}, requested: true,
      }),
      ...(v.Subpath ? { Subpath: v.Subpath } : {}),
    };
  }
  if (m.Source) throw extra("Source");
  if (m.BindOptions) throw extra("BindOptions");
  if (m.VolumeOptions) throw extra("VolumeOptions");
  return { Type: "tmpfs", Source: "", Destination: dest, Mode: "", RW: rw, Propagation: "", TmpfsOptions: tmpfsOptions(m.TmpfsOptions) };
}

/** Docker's rendering of TmpfsOptions: `mode=<octal>`, `size=<n><k|m|g>`, then `exec`/`noexec`. */
function tmpfsOptions(t: MountRequest["TmpfsOptions"]): string[] {
  const out: string[] = [];
  if (!t) return out;
  if (t.Mode) out.push(`mode=${t.Mode.toString(8)}`);
  if (t.SizeBytes) {
    if (t.SizeBytes < 0 || !Number.isInteger(t.SizeBytes)) throw errors.mountInvalidConfig("tmpfs", `invalid SizeBytes: ${t.SizeBytes}`);
    const unit = [["g", 2 ** 30], ["m", 2 ** 20], ["k", 2 ** 10]].find(([, d]) => t.SizeBytes! % (d as number) === 0) as [string, number] | undefined;
    out.push(unit ? `size=${t.SizeBytes / unit[1]}${unit[0]}` : `size=${t.SizeBytes}`);
  }
  for (const opt of t.Options ?? []) {
    if (opt.length < 1 || opt.length > 2) throw errors.mountInvalidConfig("tmpfs", "invalid option array length");
    if (!["exec", "noexec"].includes(opt[0])) throw errors.mountInvalidConfig("tmpfs", `invalid option: ${opt[0]}`);
    out.push(opt.length === 1 ? opt[0] : `${opt[0]}=${opt[1]}`);
  }
  return out;
}
