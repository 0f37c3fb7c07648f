/**
 * The client's global flags (those before the command: `-H`, `--tls*`, `--config`...) and what
 * they decide: the configuration folder and the connection to the daemon. Apart from
 * engine.ts because `engine __complete` reads the same flags from the command line being
 * completed, and must reach the daemon that line would reach.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import { connect, deferredConnection, type Connection, type ConnectionSettings } from "./connection.js";
import { chosenContext, DEFAULT_CONTEXT } from "./context/current.js";
import type { FlagSpec, Parsed } from "./flags.js";
import { HostError, parseTarget, tlsFiles } from "./transport/dial.js";

export const GLOBAL_FLAGS: FlagSpec[] = [
  { name: "config", type: "string", description: "Location of client config files (ENGINE_CONFIG)", default: "~/.engine" },
  {
    name: "context",
    short: "c",
    type: "string",
    description: `Name of the context to use to connect to the daemon (overrides ENGINE_HOST env var and default context set with "engine context use")`,
  },
  { name: "debug", short: "D", type: "bool", description: "Enable debug mode" },
  { name: "host", short: "H", type: "list", description: "Daemon socket to connect to (ENGINE_HOST; default unix:///var/run/engine.sock)" },
  { name: "log-level", short: "l", type: "string", description: `Set the logging level ("debug"|"info"|"warn"|"error"|"fatal")`, default: "info" },
  { name: "tls", type: "bool", description: "Use TLS; implied by --tlsverify" },
  { name: "tlscacert", type: "string", description: "Trust certs signed only by this CA", default: "~/.engine/ca.pem" },
  { name: "tlscert", type: "string", description: "Path to TLS certificate file", default: "~/.engine/cert.pem" },
  { name: "tlskey", type: "string", description: "Path to TLS key file", default: "~/.engine/key.pem" },
  { name: "tlsverify", type: "bool", description: "Use TLS and verify the remote (ENGINE_TLS_VERIFY)" },
  { name: "version", short: "v", type: "bool", description: "Print version information and quit" },
  { name: "help", type: "bool", description: "Print usage", hidden: true },
];

function expandHome(p: string): string {
  return p === "~" ? homedir() : p.startsWith("~/") ? join(homedir(), p.slice(2)) : p;
}

/** `--config`, else ENGINE_CONFIG, else ~/.engine. */
export function configDirOf(global: Parsed, env: NodeJS.ProcessEnv): string {
  return expandHome(String(global.flags.config) === "~/.engine" ? (env.ENGINE_CONFIG ?? "~/.engine") : String(global.flags.config));
}

/** The Docker CLI's refusal of `-H` and `--context` together. */
export const CONTEXT_AND_HOST = "conflicting options: cannot specify both --host and --context";

/** Whether both `-H` and `--context` were given. */
export function contextAndHostGiven(global: Parsed): boolean {
  return String(global.flags.context) !== "" && (global.flags.host as string[]).length > 0;
}

/** The context the global flags, the environment and config.json name (context/current.ts). */
export function currentContextOf(global: Parsed, env: NodeJS.ProcessEnv, configDir: string): string {
  return chosenContext({ flag: String(global.flags.context), hostGiven: (global.flags.host as string[]).length > 0, env, configDir });
}

/** Where `-H`, ENGINE_HOST and `--tls*` point: the "default" context (HostError for a bad `-H`). */
export function defaultSettings(global: Parsed, env: NodeJS.ProcessEnv): ConnectionSettings {
  const g = global.flags;
  const hosts = g.host as string[];
  if (hosts.length > 1) throw new HostError("Specify only one -H");
  const verify = Boolean(g.tlsverify) || (env.ENGINE_TLS_VERIFY ?? "") !== "";
  const useTls = Boolean(g.tls) || verify;
  const target = parseTarget(hosts[0] ?? env.ENGINE_HOST ?? "", useTls);
  const path = (flag: string) => (global.given.has(flag) ? expandHome(String(g[flag])) : undefined);
  const tls = useTls && target.proto === "tcp" ? tlsFiles({ verify, cacert: path("tlscacert"), cert: path("tlscert"), key: path("tlskey") }, env) : undefined;
  return { target, tls, env };
}

/**
 * The connection to the daemon of `context`: the default one's from the flags, a stored one's
 * from the store (read, and its module loaded, only when a command connects).
 */
export function openConnection(global: Parsed, env: NodeJS.ProcessEnv, configDir: string, context: string): Connection {
  if (context === DEFAULT_CONTEXT) return connect(defaultSettings(global, env));
  return deferredConnection(async () => (await import("./context/connect.js")).contextConnection(configDir, context, env));
}
