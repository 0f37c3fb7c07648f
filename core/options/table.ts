/**
 * The one option table of `engined`. Each entry is an option of the spec: its flag and short
 * alias, its `daemon.json` key (the plural for repeatable flags), its value type, its default,
 * whether a reload may change it, and its help line. Flags, `--help`, defaults and the values
 * `/info` reports all come from here; adding an option is adding an entry.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import { bool, keyValue, list, oneOf, string, type ValueType } from "./value-types.js";

export type OptionGroup = "api" | "tls" | "daemon" | "logging" | "drivers" | "registry";

export interface OptionDefinition<T> {
  /** Long flag without dashes: `log-level`. */
  readonly flag: string;
  readonly short?: string;
  /** `daemon.json` key; defaults to the flag, the plural for repeatable flags. */
  readonly key?: string;
  readonly type: ValueType<T>;
  /** The value when neither flag nor environment sets it; a function when it depends on them. */
  readonly default: NoInfer<T> | ((env: NodeJS.ProcessEnv) => NoInfer<T>);
  readonly group: OptionGroup;
  readonly help: string;
  /** Name of the value in `--help` (`--data-root string`). */
  readonly metavar?: string;
  readonly reloadable?: boolean;
  /** The environment variable that sets the option when no flag does. */
  readonly env?: string;
  /** Only parsed, never part of the configuration (`--help`, `--version`). */
  readonly action?: boolean;
}

function option<T>(def: OptionDefinition<T>): OptionDefinition<T> {
  return def;
}

/** `ENGINE_CERT_PATH`, else `~/.engine`: where the TLS files are looked for by default. */
function certPath(env: NodeJS.ProcessEnv): string {
  return env.ENGINE_CERT_PATH || join(homedir(), ".engine");
}

export const optionTable = {
  // --- the API listeners ---
  host: option({
    flag: "host", short: "H", key: "hosts", type: list(), default: [], group: "api",
    metavar: "list", help: "Daemon socket(s) to connect to: unix://PATH, tcp://[HOST][:PORT][/PATH], fd://[N]",
  }),
  group: option({
    flag: "group", short: "G", type: string, default: "engine", group: "api",
    help: "Group for the unix socket",
  }),
  // --- TLS ---
  tls: option({ flag: "tls", type: bool, default: false, group: "tls", help: "Use TLS; implied by --tlsverify" }),
  tlsverify: option({
    flag: "tlsverify", type: bool, default: (env) => Boolean(env.ENGINE_TLS_VERIFY), group: "tls",
    env: "ENGINE_TLS_VERIFY", help: "Use TLS and verify the remote",
  }),
  tlscacert: option({
    flag: "tlscacert", type: string, default: (env) => join(certPath(env), "ca.pem"), group: "tls",
    help: "Trust certs signed only by this CA",
  }),
  tlscert: option({
    flag: "tlscert", type: string, default: (env) => join(certPath(env), "cert.pem"), group: "tls",
    help: "Path to TLS certificate file",
  }),
  tlskey: option({
    flag: "tlskey", type: string, default: (env) => join(certPath(env), "key.pem"), group: "tls",
    help: "Path to TLS key file",
  }),
  // --- the daemon process ---
  "data-root": option({
    flag: "data-root", type: string, default: "/var/lib/engine", group: "daemon",
    help: "Root directory of persistent engine state",
  }),
  "exec-root": option({
    flag: "exec-root", type: string, default: "/var/run/engine", group: "daemon",
    help: "Root directory for execution state files",
  }),
  pidfile: option({
    flag: "pidfile", short: "p", type: string, default: "/var/run/engine.pid", group: "daemon",
    help: "Path to use for daemon PID file",
  }),
  label: option({
    flag: "label", key: "labels", type: list(keyValue), default: [], group: "daemon", reloadable: true,
    metavar: "list", help: "Set key=value labels to the daemon",
  }),
  experimental: option({
    flag: "experimental", type: bool, default: false, group: "daemon", help: "Enable experimental features",
  }),
  // --- logging ---
  debug: option({
    flag: "debug", short: "D", type: bool, default: false, group: "logging", reloadable: true,
    help: "Enable debug mode",
  }),
  "log-level": option({
    flag: "log-level", short: "l", type: oneOf("debug", "info", "warn", "error", "fatal"), default: "info",
    group: "logging", help: 'Set the logging level ("debug"|"info"|"warn"|"error"|"fatal")',
  }),
  "log-format": option({
    flag: "log-format", type: oneOf("text", "json"), default: "text", group: "logging",
    help: 'Set the logging format ("text"|"json")',
  }),
  "raw-logs": option({
    flag: "raw-logs", type: bool, default: false, group: "logging", help: "Full timestamps without ANSI coloring",
  }),
  // --- drivers ---
  "authorization-plugin": option({
    flag: "authorization-plugin", key: "authorization-plugins", type: list(), default: [], group: "drivers",
    reloadable: true, metavar: "list", help: "Authorization plugins to load, in order",
  }),
  "storage-driver": option({
    flag: "storage-driver", short: "s", type: string, default: "", env: "ENGINE_DRIVER", group: "drivers",
    help: "Storage driver to use",
  }),
  "log-driver": option({
    flag: "log-driver", type: string, default: "json-file", group: "drivers",
    help: "Default driver for container logs",
  }),
  // --- actions: parsed, acted on, never configuration ---
  help: option({ flag: "help", type: bool, default: false, group: "daemon", action: true, help: "Print usage" }),
  version: option({
    flag: "version", short: "v", type: bool, default: false, group: "daemon", action: true,
    help: "Print version information and quit",
  }),
} as const;

export type OptionTable = typeof optionTable;
export type OptionName = keyof OptionTable;
type ValueOf<D> = D extends OptionDefinition<infer T> ? T : never;
/** The daemon's configuration: one typed value per option of the table. */
export type DaemonConfig = { -readonly [K in OptionName]: ValueOf<OptionTable[K]> };

export const optionNames = Object.keys(optionTable) as OptionName[];

/** The `daemon.json` key of an option. */
export function fileKey(def: OptionDefinition<unknown>): string {
  return def.key ?? def.flag;
}
