/**
 * One CDI spec file (Container Device Interface, spec versions 0.1.0 to 1.0.0): its shape, and
 * the checks a file must pass before its devices can be asked for. A vendor writes such a file
 * (JSON or YAML) into a spec directory; it names a `kind` (`vendor.com/class`), its `devices`
 * (each with its `containerEdits`), and edits made for any of them (the spec-level
 * `containerEdits`). Unknown fields, an unknown `cdiVersion`, a version older than the fields
 * used, a bad name, duplicate devices, a device without edits: each refuses the whole file, with
 * a message that says which and why.
 */
import typia, { type tags } from "typia";
import { typiaProblem } from "../options/value-types-net.js";
import { checkDeviceName, parseKind } from "./cdi-names.js";

export interface CdiDeviceNode {
  /** The path in the container. */
  path: string;
  /** The device on the host (default: `path`). */
  hostPath?: string;
  /** `b`, `c` (or `u`), `p`; read from the host device when missing. */
  type?: string;
  major?: number & tags.Type<"int64"> & tags.Minimum<0>;
  minor?: number & tags.Type<"int64"> & tags.Minimum<0>;
  fileMode?: number & tags.Type<"uint32">;
  /** Device cgroup access: any of `rwm` (default `rwm`), or `none`. */
  permissions?: string;
  uid?: number & tags.Type<"uint32">;
  gid?: number & tags.Type<"uint32">;
}

export interface CdiMount {
  hostPath: string;
  containerPath: string;
  options?: string[];
  type?: string;
}

export interface CdiHook {
  /** An OCI hook name: prestart, createRuntime, createContainer, startContainer, poststart, poststop. */
  hookName: string;
  path: string;
  args?: string[];
  env?: string[];
  timeout?: number & tags.Type<"int32"> & tags.ExclusiveMinimum<0>;
}

export interface CdiIntelRdt {
  closID?: string;
  l3CacheSchema?: string;
  memBwSchema?: string;
  enableCMT?: boolean;
  enableMBM?: boolean;
}

export interface CdiContainerEdits {
  env?: string[];
  deviceNodes?: CdiDeviceNode[];
  hooks?: CdiHook[];
  mounts?: CdiMount[];
  intelRdt?: CdiIntelRdt;
  additionalGids?: (number & tags.Type<"uint32">)[];
}

export interface CdiDevice {
  name: string;
  annotations?: Record<string, string>;
  containerEdits: CdiContainerEdits;
}

export interface CdiSpecFile {
  cdiVersion: string;
  kind: string;
  annotations?: Record<string, string>;
  devices: CdiDevice[];
  containerEdits?: CdiContainerEdits;
}

/** A spec file that passed every check, with its vendor and class split out. */
export interface CdiSpec extends CdiSpecFile {
  vendor: string;
  class: string;
}

const validateSpecFile = typia.createValidateEquals<CdiSpecFile>();

const HOOK_NAMES: readonly string[] = ["prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop"];

/** The versions of the CDI spec this engine reads, oldest first. */
const VERSIONS = ["0.1.0", "0.2.0", "0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0", "0.8.0", "1.0.0"] as const;

/**
 * Parses a spec file's text (`.json` as JSON, anything else as YAML) and checks it. The YAML
 * parser is loaded with the first YAML spec: most hosts have none, and it is 70 modules.
 */
export async function parseCdiSpec(text: string, path: string): Promise<CdiSpec> {
  let raw: unknown;
  try {
    raw = path.endsWith(".json") ? JSON.parse(text) : (await import("yaml")).parse(text);
  } catch (err) {
    throw new Error(`cannot parse: ${(err as Error).message}`);
  }
  const checked = validateSpecFile(raw);
  if (!checked.success) throw new Error(typiaProblem(checked.errors, "a CDI spec (cdiVersion, kind, devices, containerEdits)"));
  return checkSpec(checked.data);
}

function checkSpec(spec: CdiSpecFile): CdiSpec {
  const version = spec.cdiVersion.replace(/^v/, "");
  const known = VERSIONS.indexOf(version as (typeof VERSIONS)[number]);
  if (known < 0) throw new Error(`unknown cdiVersion "${spec.cdiVersion}" (known: ${VERSIONS.join(", ")})`);
  const needed = requiredVersion(spec);
  if (VERSIONS.indexOf(needed) > known) throw new Error(`cdiVersion ${version} is too old for the fields this spec uses: they need ${needed}`);
  const { vendor, class: cls } = parseKind(spec.kind);
  checkAnnotations(spec.annotations);
  if (spec.containerEdits) checkEdits(spec.containerEdits);
  if (spec.devices.length === 0) throw new Error("the spec has no devices");
  const seen = new Set<string>();
  for (const d of spec.devices) {
    try {
      checkDeviceName(d.name);
      if (seen.has(d.name)) throw new Error("it is defined twice");
      seen.add(d.name);
      checkAnnotations(d.annotations);
      if (isEmpty(d.containerEdits)) throw new Error("its containerEdits are empty");
      checkEdits(d.containerEdits);
    } catch (err) {
      throw new Error(`device "${d.name}": ${(err as Error).message}`);
    }
  }
  return { ...spec, vendor, class: cls };
}

/** The oldest version that has every field the spec uses (the CDI library's rules). */
function requiredVersion(spec: CdiSpecFile): (typeof VERSIONS)[number] {
  const all = [spec.containerEdits, ...spec.devices.map((d) => d.containerEdits)].filter((e): e is CdiContainerEdits => e !== undefined);
  if (all.some((e) => e.intelRdt !== undefined || (e.additionalGids?.length ?? 0) > 0)) return "0.7.0";
  const annotated = Object.keys(spec.annotations ?? {}).length > 0 || spec.devices.some((d) => Object.keys(d.annotations ?? {}).length > 0);
  if (annotated || (spec.kind.split("/")[1] ?? "").includes(".")) return "0.6.0";
  if (spec.devices.some((d) => /^[^A-Za-z]/.test(d.name)) || all.some((e) => e.deviceNodes?.some((n) => n.hostPath))) return "0.5.0";
  if (all.some((e) => e.mounts?.some((m) => m.type))) return "0.4.0";
  return "0.3.0";
}

function checkAnnotations(annotations: Record<string, string> | undefined): void {
  for (const key of Object.keys(annotations ?? {})) {
    if (key === "" || !/^([A-Za-z0-9.-]+\/)?[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$/.test(key)) throw new Error(`annotation key "${key}" is not valid`);
  }
}

function isEmpty(e: CdiContainerEdits): boolean {
  return !(e.env?.length || e.deviceNodes?.length || e.hooks?.length || e.mounts?.length || e.additionalGids?.length || e.intelRdt);
}

function checkEnv(env: readonly string[] | undefined, where: string): void {
  for (const v of env ?? []) if (v.indexOf("=") <= 0) throw new Error(`${where}: environment entry "${v}" is not NAME=value`);
}

/** The checks of one `containerEdits`. */
function checkEdits(e: CdiContainerEdits): void {
  checkEnv(e.env, "env");
  for (const n of e.deviceNodes ?? []) {
    if (n.path === "") throw new Error("a device node has an empty path");
    if (!["", "b", "c", "u", "p"].includes(n.type ?? "")) throw new Error(`device node ${n.path}: type "${n.type}" is not b, c, u or p`);
    const perms = n.permissions ?? "";
    if (perms !== "none" && !/^[rwm]*$/.test(perms)) throw new Error(`device node ${n.path}: permissions "${perms}" are not a mix of r, w and m (or none)`);
  }
  for (const h of e.hooks ?? []) {
    if (!HOOK_NAMES.includes(h.hookName)) throw new Error(`hook name "${h.hookName}" is not one of ${HOOK_NAMES.join(", ")}`);
    if (h.path === "") throw new Error(`hook ${h.hookName} has an empty path`);
    checkEnv(h.env, `hook ${h.hookName}`);
  }
  for (const m of e.mounts ?? []) {
    if (m.hostPath === "") throw new Error("a mount has an empty hostPath");
    if (m.containerPath === "") throw new Error("a mount has an empty containerPath");
  }
  const clos = e.intelRdt?.closID;
  if (clos !== undefined && clos !== "/" && (clos.length >= 4096 || clos === "." || clos === ".." || /[/\n]/.test(clos))) {
    throw new Error(`intelRdt closID "${clos}" is not a valid name`);
  }
}
