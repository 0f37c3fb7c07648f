/** Options of the daemon process: roots, pid file, labels, logging, shutdown. */
import { BOTH, LINUX, option } from "../option.js";
import { bool, checkKeyValue, envSwitch, int, list, map, oneOf, string } from "../value-types.js";
import { inRootlessKit, rootlessOr, rootlessPaths } from "../rootless-defaults.js";

export const daemonOptions = {
  "data-root": option({
    flag: "data-root", key: "data-root", type: string(), default: rootlessOr("/var/lib/engine", rootlessPaths.dataRoot),
    platforms: BOTH, group: "daemon", help: "Root directory of persistent engine state (rootless: $XDG_DATA_HOME/engine)", example: { args: ["--data-root", "/srv/engine"], value: "/srv/engine" },
  }),
  "exec-root": option({
    flag: "exec-root", key: "exec-root", type: string(), default: rootlessOr("/var/run/engine", rootlessPaths.execRoot),
    platforms: LINUX, group: "daemon", help: "Root directory for execution state files (rootless: $XDG_RUNTIME_DIR/engine)", example: { args: ["--exec-root", "/run/e"], value: "/run/e" },
  }),
  pidfile: option({
    flag: "pidfile", short: "p", key: "pidfile", type: string(), default: rootlessOr("/var/run/engine.pid", rootlessPaths.pidfile),
    platforms: BOTH, group: "daemon", help: "Path to use for daemon PID file (rootless: $XDG_RUNTIME_DIR/engine.pid)", example: { args: ["-p", "/run/e.pid"], value: "/run/e.pid" },
  }),
  label: option({
    flag: "label", key: "labels", type: list(checkKeyValue), default: [], platforms: BOTH, group: "daemon",
    reloadable: true, metavar: "list", help: "Set key=value labels to the daemon (a reload replaces the whole set)",
    example: { args: ["--label", "a=1", "--label", "b=2"], value: ["a=1", "b=2"] },
  }),
  experimental: option({
    flag: "experimental", key: "experimental", type: bool, default: false, platforms: BOTH, group: "daemon",
    help: "Enable experimental features", example: { args: ["--experimental"], value: true },
  }),
  "live-restore": option({
    flag: "live-restore", key: "live-restore", type: bool, default: false, platforms: LINUX, group: "daemon",
    reloadable: true, help: "Keep containers running while the daemon restarts", example: { args: ["--live-restore"], value: true },
  }),
  "shutdown-timeout": option({
    flag: "shutdown-timeout", key: "shutdown-timeout", type: int(0), default: 15, platforms: BOTH, group: "daemon",
    reloadable: true, help: "Default shutdown timeout in seconds", example: { args: ["--shutdown-timeout", "30"], value: 30 },
  }),
  rootless: option({
    flag: "rootless", key: "rootless", type: bool, default: inRootlessKit, platforms: LINUX, group: "daemon",
    help: "Enable rootless mode (on by default inside RootlessKit; see docs/rootless.md)", example: { args: ["--rootless"], value: true },
  }),
  // --- set only by the environment ---
  "no-pivot-root": option({
    key: null, type: envSwitch, default: false, env: "ENGINE_RAMDISK", platforms: LINUX, group: "runtime",
    help: "ENGINE_RAMDISK: run containers without pivot_root (for a root on a ramdisk)", example: { value: false },
  }),
  "disable-pigz": option({
    key: null, type: envSwitch, default: false, env: "ENGINE_DISABLE_PIGZ", platforms: LINUX, group: "registry",
    help: "ENGINE_DISABLE_PIGZ: do not decompress layers with unpigz even when it is installed", example: { value: false },
  }),
  conmon: option({
    key: null, type: string(), default: "conmon", env: "ENGINE_CONMON", platforms: LINUX, group: "runtime",
    help: "ENGINE_CONMON: the conmon the supervisor runs containers with (a name looked up in PATH, or a path)", example: { value: "/usr/local/bin/conmon" },
  }),
  tmpdir: option({
    key: null, type: string(), default: "", env: "ENGINE_TMPDIR", platforms: LINUX, group: "daemon",
    help: "ENGINE_TMPDIR: where the daemon keeps temporary files (default <data-root>/tmp)", example: { value: "/var/tmp/engine" },
  }),
  // --- logging ---
  debug: option({
    flag: "debug", short: "D", key: "debug", type: bool, default: false, platforms: BOTH, group: "logging",
    reloadable: true, help: "Enable debug mode", example: { args: ["-D"], value: true },
  }),
  "log-level": option({
    flag: "log-level", short: "l", key: "log-level", type: oneOf("debug", "info", "warn", "error", "fatal"),
    default: "info", platforms: BOTH, group: "logging", help: 'Set the logging level ("debug"|"info"|"warn"|"error"|"fatal")',
    example: { args: ["-l", "warn"], value: "warn" },
  }),
  "log-format": option({
    flag: "log-format", key: "log-format", type: oneOf("text", "json"), default: "text", platforms: BOTH, group: "logging",
    help: 'Set the logging format ("text"|"json")', example: { args: ["--log-format", "json"], value: "json" },
  }),
  "raw-logs": option({
    flag: "raw-logs", key: "raw-logs", type: bool, default: false, platforms: BOTH, group: "logging",
    help: "Full timestamps without ANSI coloring", example: { args: ["--raw-logs"], value: true },
  }),
  "log-driver": option({
    flag: "log-driver", key: "log-driver", type: string(), default: "json-file", platforms: BOTH, group: "logging",
    help: "Default driver for container logs", example: { args: ["--log-driver", "local"], value: "local" },
  }),
  "log-opt": option({
    flag: "log-opt", key: "log-opts", type: map, default: {}, platforms: LINUX, group: "logging", metavar: "map",
    help: "Default log driver options for containers", example: { args: ["--log-opt", "max-size=10m", "--log-opt", "max-file=3"], value: { "max-size": "10m", "max-file": "3" } },
  }),
} as const;
