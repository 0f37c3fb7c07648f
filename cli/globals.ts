/**
 * The client's global flags (those before the command: `-H`, `--tls*`, `--config`...) and what
 * they decide: the configuration folder and the connection to the daemon. Apart from
 * engine.ts because `engine __complete` reads the same flags from the command line being
 * completed, and must reach the daemon that line would reach.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import { connect, type Connection } from "./connection.js";
import type { FlagSpec, Parsed } from "./flags.js";
import { HostError, parseTarget, tlsFiles } from "./transport/dial.js";

export const GLOBAL_FLAGS: FlagSpec[] = [
  { name: "config", type: "string", description: "Location of client config files (ENGINE_CONFIG)", default: "~/.engine" },
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

export function expandHome(p: string): string {
  return p === "~" ? homedir() : p.startsWith("~/") ? join(homedir(), p.slice(2)) : p;
}

/** `--config`, else ENGINE_CONFIG, else ~/.engine. */
export function configDirOf(global: Parsed, env: NodeJS.ProcessEnv): string {
  return expandHome(String(global.flags.config) === "~/.engine" ? (env.ENGINE_CONFIG ?? "~/.engine") : String(global.flags.config));
}

/** The connection the global flags and the environment name (HostError for a bad `-H`). */
export function openConnection(global: Parsed, env: NodeJS.ProcessEnv): Connection {
  const g = global.flags;
  const hosts = g.host as string[];
  if (hosts.length > 1) throw new HostError("Specify only one -H");
  const verify = Boolean(g.tlsverify) || (env.ENGINE_TLS_VERIFY ?? "") !== "";
  const useTls = Boolean(g.tls) || verify;
  const target = parseTarget(hosts[0] ?? env.ENGINE_HOST ?? "", useTls);
  const path = (flag: string) => (global.given.has(flag) ? expandHome(String(g[flag])) : undefined);
  const tls = useTls && target.proto === "tcp" ? tlsFiles({ verify, cacert: path("tlscacert"), cert: path("tlscert"), key: path("tlskey") }, env) : undefined;
  return connect({ target, tls, env });
}
