/**
 * `--mount type=bind|volume|tmpfs|image,source=...,target=...[,options]` as the Docker CLI 28
 * reads it: a CSV line of `key=value` fields (keys in any case), the volume by default, a
 * relative source made absolute, each type's own options (`bind-*`, `volume-*`, `tmpfs-*`,
 * `image-*`) refused on another type, and the Docker CLI's messages. The result is the API's
 * Mount object, with only the fields the Docker CLI's JSON carries.
 */
import { resolve } from "node:path";
import { csvFields } from "../flags.js";
import { parseBytes } from "./units.js";

export interface MountRequest {
  Type: string;
  Source?: string;
  Target?: string;
  ReadOnly?: boolean;
  Consistency?: string;
  BindOptions?: { Propagation?: string; NonRecursive?: boolean; ReadOnlyNonRecursive?: boolean; ReadOnlyForceRecursive?: boolean };
  VolumeOptions?: { NoCopy?: boolean; Labels?: Record<string, string>; Subpath?: string; DriverConfig: { Name?: string; Options?: Record<string, string> } };
  ImageOptions?: { Subpath?: string };
  TmpfsOptions?: { SizeBytes?: number; Mode?: number };
}

/** Go's strconv.ParseBool. */
function goBool(v: string): boolean | undefined {
  if (["1", "t", "T", "TRUE", "true", "True"].includes(v)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(v)) return false;
  return undefined;
}

/** A warning as the Docker CLI logs it (logrus' text form), for a deprecated option. */
export function logrusWarning(message: string): string {
  return `time="${new Date().toISOString().replace(/\.\d+Z$/, "Z")}" level=warning msg="${message}"\n`;
}

/** One `--mount` value; `warn` hears of deprecated options. */
export function parseMount(value: string, warn: (message: string) => void = () => undefined): MountRequest {
  if (value === "") throw new Error("EOF");
  const m: MountRequest = { Type: "volume" };
  const bind = () => (m.BindOptions ??= {});
  const volume = () => (m.VolumeOptions ??= { DriverConfig: {} });
  const tmpfs = () => (m.TmpfsOptions ??= {});
  const setOn = (target: Record<string, string>, kv: string) => {
    const eq = kv.indexOf("=");
    const k = eq < 0 ? kv : kv.slice(0, eq);
    if (k !== "") target[k] = eq < 0 ? "" : kv.slice(eq + 1);
  };
  for (const field of csvFields(value)) {
    const eq = field.indexOf("=");
    const key = (eq < 0 ? field : field.slice(0, eq)).toLowerCase();
    const val = field.slice(eq + 1);
    const bool = (what: string = key) => {
      const b = goBool(val);
      if (b === undefined) throw new Error(`invalid value for ${what}: ${val}`);
      return b;
    };
    if (eq < 0) {
      if (key === "readonly" || key === "ro") m.ReadOnly = true;
      else if (key === "volume-nocopy") volume().NoCopy = true;
      else if (key === "bind-nonrecursive") bind().NonRecursive = true;
      else throw new Error(`invalid field '${field}' must be a key=value pair`);
      continue;
    }
    switch (key) {
      case "type":
        m.Type = val.toLowerCase();
        break;
      case "source":
      case "src":
        m.Source = !val.startsWith("/") && val.startsWith(".") ? resolve(val) : val;
        break;
      case "target":
      case "dst":
      case "destination":
        m.Target = val;
        break;
      case "readonly":
      case "ro":
        m.ReadOnly = bool();
        break;
      case "consistency":
        m.Consistency = val.toLowerCase();
        break;
      case "bind-propagation":
        bind().Propagation = val.toLowerCase();
        break;
      case "bind-nonrecursive":
        bind().NonRecursive = bool();
        warn("bind-nonrecursive is deprecated, use bind-recursive=disabled instead");
        break;
      case "bind-recursive":
        if (val === "disabled") bind().NonRecursive = true;
        else if (val === "writable") bind().ReadOnlyNonRecursive = true;
        else if (val === "readonly") bind().ReadOnlyForceRecursive = true;
        else if (val !== "enabled") throw new Error(`invalid value for ${key}: ${val} (must be "enabled", "disabled", "writable", or "readonly")`);
        break;
      case "volume-subpath":
        volume().Subpath = val;
        break;
      case "volume-nocopy":
        volume().NoCopy = bool("volume-nocopy");
        break;
      case "volume-label":
        setOn((volume().Labels ??= {}), val);
        break;
      case "volume-driver":
        volume().DriverConfig.Name = val;
        break;
      case "volume-opt":
        setOn((volume().DriverConfig.Options ??= {}), val);
        break;
      case "image-subpath":
        (m.ImageOptions ??= {}).Subpath = val;
        break;
      case "tmpfs-size":
        try {
          tmpfs().SizeBytes = parseBytes(val);
        } catch {
          throw new Error(`invalid value for ${key}: ${val}`);
        }
        break;
      case "tmpfs-mode":
        if (!/^[0-7]+$/.test(val) || parseInt(val, 8) > 0xffffffff) throw new Error(`invalid value for ${key}: ${val}`);
        tmpfs().Mode = parseInt(val, 8);
        break;
      default:
        throw new Error(`unexpected key '${key}' in '${field}'`);
    }
  }
  return checked(m);
}

function checked(m: MountRequest): MountRequest {
  if (m.Type === "") throw new Error("type is required");
  if (!m.Target) throw new Error("target is required");
  if (m.VolumeOptions && m.Type !== "volume") throw new Error(`cannot mix 'volume-*' options with mount type '${m.Type}'`);
  if (m.BindOptions && m.Type !== "bind") throw new Error(`cannot mix 'bind-*' options with mount type '${m.Type}'`);
  if (m.ImageOptions && m.Type !== "image") throw new Error(`cannot mix 'image-*' options with mount type '${m.Type}'`);
  if (m.TmpfsOptions && m.Type !== "tmpfs") throw new Error(`cannot mix 'tmpfs-*' options with mount type '${m.Type}'`);
  if (m.BindOptions?.ReadOnlyNonRecursive && !m.ReadOnly) throw new Error("option 'bind-recursive=writable' requires 'readonly' to be specified in conjunction");
  if (m.BindOptions?.ReadOnlyForceRecursive) {
    if (!m.ReadOnly) throw new Error("option 'bind-recursive=readonly' requires 'readonly' to be specified in conjunction");
    if (m.BindOptions.Propagation !== "rprivate") throw new Error("option 'bind-recursive=readonly' requires 'bind-propagation=rprivate' to be specified in conjunction");
  }
  return m;
}
