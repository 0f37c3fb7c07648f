/**
 * `docker plugin set NAME KEY=VALUE...` (Docker's Plugin.Set): each argument names an Env
 * variable, a mount, a device or the Args of the plugin's configuration, with an optional field
 * (`mymount.source=/data`); only what the configuration lists as settable changes, and only the
 * fields Docker lets change: an Env's and the Args' `value`, a mount's `source`, a device's `path`.
 * A mount's source and a device's path change in the configuration and the settings alike, as
 * Docker's do (both share one value there).
 *
 * Docker answers every refusal here with a 500; the request is what is wrong, so it is a 400
 * with Docker's words (a plugin that runs: 409).
 */
import { errors } from "../../core/errors.js";
import type { Plugin } from "./plugin-object.js";

interface Settable {
  name: string;
  field: string;
  value: string;
}

const ALLOWED = { env: ["value"], args: ["value"], devices: ["path"], mounts: ["source"] } as const;

function parseSettable(arg: string): Settable {
  const eq = arg.indexOf("=");
  if (eq === 0) throw errors.managedPluginSetInvalid("invalid format, must be <name>[.<field>][=<value>]");
  const set: Settable = eq < 0 ? { name: arg, field: "", value: "" } : { name: arg.slice(0, eq), field: "", value: arg.slice(eq + 1) };
  const dot = set.name.lastIndexOf(".");
  if (dot > 0) {
    set.field = set.name.slice(dot + 1);
    set.name = set.name.slice(0, dot);
  }
  return set;
}

const pretty = (s: Settable) => (s.field ? `${s.name}.${s.field}` : s.name);

/** Whether the field asked for may be set; with no field named, the only settable one is meant. */
function checkSettable(s: Settable, allowed: readonly string[], settable: string[] | null): void {
  const list = settable ?? [];
  if (!s.field) {
    if (list.length === 1) s.field = list[0];
    else if (list.length > 1) throw errors.managedPluginSetInvalid("multiple fields are settable, one must be specified");
  }
  if (!allowed.includes(s.field) || !list.includes(s.field)) throw errors.managedPluginSetInvalid(`${JSON.stringify(pretty(s))} is not settable`);
}

/** Applies `args` to a copy of the plugin; throws, changing nothing, at the first that cannot be set. */
export function applySettings(plugin: Plugin, args: readonly string[]): Plugin {
  if (plugin.Enabled) throw errors.managedPluginSetActive();
  const sets = args.map(parseSettable);
  const next = structuredClone(plugin);
  const { Config: config, Settings: settings } = next;
  for (const s of sets) {
    const env = (config.Env ?? []).find((e) => e.Name === s.name);
    if (env) {
      checkSettable(s, ALLOWED.env, env.Settable);
      const at = settings.Env.findIndex((e) => e.split("=")[0] === s.name);
      if (at >= 0) settings.Env[at] = `${s.name}=${s.value}`;
      else settings.Env.push(`${s.name}=${s.value}`);
      continue;
    }
    const mount = (config.Mounts ?? []).findIndex((m) => m.Name === s.name);
    if (mount >= 0) {
      checkSettable(s, ALLOWED.mounts, config.Mounts![mount].Settable);
      config.Mounts![mount].Source = s.value;
      for (const m of settings.Mounts) if (m.Name === s.name) m.Source = s.value;
      continue;
    }
    const device = (config.Linux.Devices ?? []).findIndex((d) => d.Name === s.name);
    if (device >= 0) {
      checkSettable(s, ALLOWED.devices, config.Linux.Devices![device].Settable);
      config.Linux.Devices![device].Path = s.value;
      for (const d of settings.Devices) if (d.Name === s.name) d.Path = s.value;
      continue;
    }
    if (config.Args.Name === s.name) {
      checkSettable(s, ALLOWED.args, config.Args.Settable);
      settings.Args = s.value.split(" ");
      continue;
    }
    throw errors.managedPluginSetInvalid(`setting ${JSON.stringify(s.name)} not found in the plugin configuration`);
  }
  return next;
}
