/**
 * A managed plugin as Docker's API shows it (`types.Plugin`, API 1.51): its configuration, read
 * from the `config.json` a plugin is made from, and its settings, the part a user changes with
 * `docker plugin set`. Objects are built with their keys in the order Docker's encoder writes
 * them (Go's: a struct's fields, here alphabetical) and with `null` where Docker's would be a nil
 * list, so that a stored plugin is served as it is.
 *
 * `config.json` is read as Go's encoding/json reads it into `types.PluginConfig`: keys match
 * their field whatever their case (`entrypoint` is `Entrypoint`), unknown keys are ignored,
 * `null` leaves a field empty, and a value of the wrong kind is refused in Go's words.
 */
import { errors } from "../../core/errors.js";

export interface PluginSetting {
  Description: string;
  Name: string;
  Settable: string[] | null;
}
export interface PluginMount {
  Description: string;
  Destination: string;
  Name: string;
  Options: string[] | null;
  Settable: string[] | null;
  Source: string | null;
  Type: string;
}
export interface PluginDevice {
  Description: string;
  Name: string;
  Path: string | null;
  Settable: string[] | null;
}
export interface PluginEnv {
  Description: string;
  Name: string;
  Settable: string[] | null;
  Value: string | null;
}
export interface PluginArgs {
  Description: string;
  Name: string;
  Settable: string[] | null;
  Value: string[] | null;
}
export interface PluginConfig {
  Args: PluginArgs;
  Description: string;
  DockerVersion?: string;
  Documentation: string;
  Entrypoint: string[] | null;
  Env: PluginEnv[] | null;
  Interface: { ProtocolScheme?: string; Socket: string; Types: string[] | null };
  IpcHost: boolean;
  Linux: { AllowAllDevices: boolean; Capabilities: string[] | null; Devices: PluginDevice[] | null };
  Mounts: PluginMount[] | null;
  Network: { Type: string };
  PidHost: boolean;
  PropagatedMount: string;
  User: { GID?: number; UID?: number };
  WorkDir: string;
  rootfs?: { diff_ids: string[] | null; type?: string };
}
export interface PluginSettings {
  Args: string[];
  Devices: PluginDevice[];
  Env: string[];
  Mounts: PluginMount[];
}
export interface Plugin {
  Config: PluginConfig;
  Enabled: boolean;
  Id: string;
  Name: string;
  PluginReference?: string;
  Settings: PluginSettings;
}

/** A capability a plugin provides, from `docker.authz/1.0`: prefix `docker`, capability `authz`, version `1.0`. */
export interface InterfaceType {
  prefix: string;
  capability: string;
  version: string;
}

/** Reads an interface type as Docker's PluginInterfaceType does: the prefix ends at the last `.` before the first `/`. */
export function interfaceType(text: string): InterfaceType {
  const slash = text.indexOf("/");
  const head = slash < 0 ? text : text.slice(0, slash);
  const dot = head.lastIndexOf(".");
  return { prefix: dot < 0 ? "" : head.slice(0, dot), capability: head.slice(dot + 1), version: slash < 0 ? "" : text.slice(slash + 1) };
}

/** Whether the plugin provides `capability` (Docker's FilterByCap: prefix `docker`, any case of the name asked). */
export function provides(plugin: Plugin, capability: string): boolean {
  const wanted = capability.toLowerCase();
  return (plugin.Config.Interface.Types ?? []).some((t) => {
    const type = interfaceType(t);
    return type.prefix === "docker" && type.capability === wanted;
  });
}

// --- decoding config.json ------------------------------------------------------------------------

type Kind = "string" | "bool" | "uint32" | "strings" | "nullableString" | "interfaceTypes" | Fields | { list: Fields };
interface Fields {
  go: string;
  fields: Record<string, Kind>;
}

const SETTING = { Description: "string", Name: "string", Settable: "strings" } as const;
const MOUNT: Fields = { go: "PluginMount", fields: { ...SETTING, Destination: "string", Options: "strings", Source: "nullableString", Type: "string" } };
const DEVICE: Fields = { go: "PluginDevice", fields: { ...SETTING, Path: "nullableString" } };
const ENV: Fields = { go: "PluginEnv", fields: { ...SETTING, Value: "nullableString" } };
const CONFIG: Fields = {
  go: "PluginConfig",
  fields: {
    Args: { go: "PluginConfigArgs", fields: { ...SETTING, Value: "strings" } },
    Description: "string",
    DockerVersion: "string",
    Documentation: "string",
    Entrypoint: "strings",
    Env: { list: ENV },
    Interface: { go: "PluginConfigInterface", fields: { ProtocolScheme: "string", Socket: "string", Types: "interfaceTypes" } },
    IpcHost: "bool",
    Linux: { go: "PluginConfigLinux", fields: { AllowAllDevices: "bool", Capabilities: "strings", Devices: { list: DEVICE } } },
    Mounts: { list: MOUNT },
    Network: { go: "PluginConfigNetwork", fields: { Type: "string" } },
    PidHost: "bool",
    PropagatedMount: "string",
    User: { go: "PluginConfigUser", fields: { GID: "uint32", UID: "uint32" } },
    WorkDir: "string",
    rootfs: { go: "PluginConfigRootfs", fields: { diff_ids: "strings", type: "string" } },
  },
};

class DecodeError extends Error {}

function jsonKind(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v === "object" ? "object" : typeof v;
}

function goType(kind: Kind): string {
  if (typeof kind === "string") {
    return { string: "string", bool: "bool", uint32: "uint32", strings: "[]string", nullableString: "string", interfaceTypes: "[]types.PluginInterfaceType" }[kind];
  }
  return "list" in kind ? `[]types.${kind.list.go}` : `types.${kind.go}`;
}

function mismatch(value: unknown, path: string, kind: Kind): DecodeError {
  return new DecodeError(`json: cannot unmarshal ${jsonKind(value)} into Go struct field ${path} of type ${goType(kind)}`);
}

function decode(value: unknown, kind: Kind, path: string): unknown {
  if (typeof kind === "object" && "list" in kind) {
    if (value === null || value === undefined) return null;
    if (!Array.isArray(value)) throw mismatch(value, path, kind);
    return value.map((v) => decodeFields(v, kind.list, path));
  }
  if (typeof kind === "object") return decodeFields(value, kind, path);
  switch (kind) {
    case "string":
      if (value === null || value === undefined) return "";
      if (typeof value !== "string") throw mismatch(value, path, kind);
      return value;
    case "nullableString":
      if (value === null || value === undefined) return null;
      if (typeof value !== "string") throw mismatch(value, path, kind);
      return value;
    case "bool":
      if (value === null || value === undefined) return false;
      if (typeof value !== "boolean") throw mismatch(value, path, kind);
      return value;
    case "uint32":
      if (value === null || value === undefined) return 0;
      if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > 0xffffffff) throw mismatch(value, path, kind);
      return value;
    case "strings":
    case "interfaceTypes":
      if (value === null || value === undefined) return null;
      if (!Array.isArray(value)) throw mismatch(value, path, kind);
      return value.map((v) => {
        if (typeof v !== "string") {
          if (kind === "interfaceTypes") throw new DecodeError(`${JSON.stringify(JSON.stringify(v))} is not a plugin interface type`);
          throw mismatch(v, path, "string");
        }
        if (kind === "interfaceTypes") {
          const t = interfaceType(v);
          return `${t.prefix}.${t.capability}/${t.version}`;
        }
        return v;
      });
  }
}

/** An object's fields: each key matched to its field whatever its case, unknown keys ignored. */
function decodeFields(value: unknown, fields: Fields, path: string): Record<string, unknown> {
  if (value !== null && value !== undefined && (typeof value !== "object" || Array.isArray(value))) throw mismatch(value, path, fields);
  const given = new Map<string, unknown>();
  for (const [key, v] of Object.entries((value ?? {}) as Record<string, unknown>)) {
    const field = Object.keys(fields.fields).find((f) => f === key) ?? Object.keys(fields.fields).find((f) => f.toLowerCase() === key.toLowerCase());
    if (field) given.set(field, v);
  }
  const out: Record<string, unknown> = {};
  // Docker's types list their fields in byte order of their names: so are they written
  for (const [field, kind] of Object.entries(fields.fields).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    out[field] = decode(given.get(field), kind, `${path}.${field}`);
  }
  return out;
}

/**
 * The configuration of a plugin from its `config.json` text, as Docker reads it; a refusal in
 * Docker's words (`failed to parse config: ...`).
 */
export function parsePluginConfig(text: string): PluginConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw errors.managedPluginCreateInvalid(`failed to parse config: ${(err as Error).message}`);
  }
  let out: Record<string, unknown>;
  try {
    out = decodeFields(raw, CONFIG, CONFIG.go);
  } catch (err) {
    if (err instanceof DecodeError) throw errors.managedPluginCreateInvalid(`failed to parse config: ${err.message}`);
    throw err;
  }
  const config = out as unknown as PluginConfig;
  // Go leaves out what its encoder's omitempty says: an empty DockerVersion and ProtocolScheme,
  // a zero uid and gid, a rootfs never given
  const user: PluginConfig["User"] = {};
  if (config.User.GID) user.GID = config.User.GID;
  if (config.User.UID) user.UID = config.User.UID;
  config.User = user;
  if (!config.DockerVersion) delete config.DockerVersion;
  const iface = config.Interface;
  config.Interface = { ...(iface.ProtocolScheme ? { ProtocolScheme: iface.ProtocolScheme } : {}), Socket: iface.Socket, Types: iface.Types };
  if (raw && typeof raw === "object" && !Object.keys(raw).some((k) => k.toLowerCase() === "rootfs")) delete config.rootfs;
  else if (config.rootfs && !config.rootfs.type) delete config.rootfs.type;
  return config;
}

/** Settings as a new plugin starts with them (Docker's InitEmptySettings): copies of the configuration's. */
export function initialSettings(config: PluginConfig): PluginSettings {
  return {
    Args: [...(config.Args.Value ?? [])],
    Devices: (config.Linux.Devices ?? []).map((d) => ({ ...d })),
    Env: (config.Env ?? []).filter((e) => e.Value !== null).map((e) => `${e.Name}=${e.Value}`),
    Mounts: (config.Mounts ?? []).map((m) => ({ ...m })),
  };
}

/** The object as the API serves it, keys in Docker's order. */
export function pluginDocument(p: Plugin): Plugin {
  return {
    Config: p.Config,
    Enabled: p.Enabled,
    Id: p.Id,
    Name: p.Name,
    ...(p.PluginReference ? { PluginReference: p.PluginReference } : {}),
    Settings: p.Settings,
  };
}
