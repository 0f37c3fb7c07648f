/** Options of the API listeners, TLS, and actions of the command line. */
import { homedir } from "node:os";
import { join } from "node:path";
import { BOTH, LINUX, option } from "../option.js";
import { bool, list, string } from "../value-types.js";
import { rootlessOr, rootlessPaths } from "../rootless-defaults.js";

/** `ENGINE_CERT_PATH`, else `~/.engine`: where the TLS files are looked for by default. */
function certPath(env: NodeJS.ProcessEnv): string {
  return env.ENGINE_CERT_PATH || join(homedir(), ".engine");
}

export const apiOptions = {
  host: option({
    flag: "host", short: "H", key: "hosts", type: list(), default: [], platforms: BOTH, group: "api", metavar: "list",
    help: "Daemon socket(s) to listen on: unix://PATH, tcp://[HOST][:PORT][/PATH], fd://[N]",
    example: { args: ["-H", "unix:///run/a.sock", "--host", "tcp://:2376"], value: ["unix:///run/a.sock", "tcp://:2376"] },
  }),
  group: option({
    flag: "group", short: "G", key: "group", type: string(), default: "engine", platforms: BOTH, group: "api",
    help: "Group for the unix socket", example: { args: ["-G", "docker"], value: "docker" },
  }),
  tls: option({
    // The spec's win-platform file has no `tls` key (only `tlsverify`); the flag exists on both.
    flag: "tls", key: "tls", type: bool, default: false, platforms: BOTH, keyPlatforms: { tls: LINUX }, group: "tls",
    help: "Use TLS; implied by --tlsverify", example: { args: ["--tls"], value: true },
  }),
  tlsverify: option({
    flag: "tlsverify", key: "tlsverify", type: bool, default: (env) => Boolean(env.ENGINE_TLS_VERIFY), platforms: BOTH,
    group: "tls", help: "Use TLS and verify the remote (also when ENGINE_TLS_VERIFY is set to anything)",
    example: { args: ["--tlsverify=false"], value: false },
  }),
  tlscacert: option({
    flag: "tlscacert", key: "tlscacert", type: string(), default: (env) => join(certPath(env), "ca.pem"), platforms: BOTH,
    group: "tls", help: "Trust certs signed only by this CA", example: { args: ["--tlscacert", "/c/ca.pem"], value: "/c/ca.pem" },
  }),
  tlscert: option({
    flag: "tlscert", key: "tlscert", type: string(), default: (env) => join(certPath(env), "cert.pem"), platforms: BOTH,
    group: "tls", help: "Path to TLS certificate file", example: { args: ["--tlscert", "/c/cert.pem"], value: "/c/cert.pem" },
  }),
  tlskey: option({
    flag: "tlskey", key: "tlskey", type: string(), default: (env) => join(certPath(env), "key.pem"), platforms: BOTH,
    group: "tls", help: "Path to TLS key file", example: { args: ["--tlskey", "/c/key.pem"], value: "/c/key.pem" },
  }),
  // --- actions: parsed, acted on, never configuration ---
  "config-file": option({
    flag: "config-file", key: null, type: string(), default: rootlessOr("/etc/engine/daemon.json", rootlessPaths.configFile),
    platforms: BOTH, group: "daemon", action: true, help: "Daemon configuration file (rootless: $XDG_CONFIG_HOME/engine/daemon.json)", example: { args: ["--config-file", "/tmp/d.json"], value: "/tmp/d.json" },
  }),
  validate: option({
    flag: "validate", key: null, type: bool, default: false, platforms: BOTH, group: "daemon", action: true,
    help: "Validate the daemon configuration and exit", example: { args: ["--validate"], value: true },
  }),
  help: option({
    flag: "help", key: null, type: bool, default: false, platforms: BOTH, group: "daemon", action: true,
    help: "Print usage", example: { args: ["--help"], value: true },
  }),
  version: option({
    flag: "version", short: "v", key: null, type: bool, default: false, platforms: BOTH, group: "daemon", action: true,
    help: "Print version information and quit", example: { args: ["-v"], value: true },
  }),
} as const;
