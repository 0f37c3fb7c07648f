/**
 * The `engined` process, entered through engined.ts: the only file that starts the daemon,
 * handles its signals and exits. Everything else is in `daemon.ts` and below, and can be
 * started in-process by tests.
 */
import "./restore-env.js"; // first: before anything could start a process
import { EngineError } from "../core/errors.js";
import { armKillPoints, configureKillPoints } from "../core/kill-points.js";
import { loadConfig, type LoadedConfig } from "../core/options/load-config.js";
import { resolveOptions } from "../core/options/resolve.js";
import type { OptionName } from "../core/options/table.js";
import { ENGINE_VERSION, GIT_COMMIT } from "../core/version.js";
import { parseDaemonArgs } from "./daemon-args.js";
import { daemonHelp, pluginsHelp } from "./daemon-help.js";
import { startDaemon, type RunningDaemon } from "./daemon.js";
import { readHostFacts, ruleHost } from "./host-facts.js";
import { createLogger } from "./logger.js";
import { handleProcessFaults, type DaemonPhase } from "./process-faults.js";
import { defaultResolveOptions } from "./plugins/resolve-plugin.js";
import { validateStorageOptions } from "./storage/option-owners.js";
import { startDone } from "./bundle-entries.js";
import { configureProxyEnv } from "./proxy-env.js";

/**
 * Calls `done` once the first request is answered, or a second after the start if none is by
 * then: the bundle's code caches (startDone) are written then, so that they hold the code that
 * serves a request too, which V8 compiles only when the first one comes (the first `/_ping` of
 * a start took 5 ms with caches made before it, 3.5 with these).
 */
function afterFirstAnswer(daemon: RunningDaemon, done: () => void): void {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, 1000)).unref());
  void Promise.race([daemon.api.firstAnswer, waited]).then(() => {
    clearTimeout(timer);
    setImmediate(done);
  });
}

function fail(message: string): number {
  process.stderr.write(`engined: ${message}\n`);
  return 1;
}

async function main(): Promise<number> {
  // where a start's time goes, logged at start and when ready (bench/startup.mjs --detail
  // prints it): Node's own start and loading the code, the configuration, the daemon's start
  const loadedAt = performance.now();
  let flags: Map<OptionName, string[]>;
  try {
    flags = parseDaemonArgs(process.argv.slice(2));
    const actions = resolveOptions(flags, process.env).config;
    if (actions.version) {
      process.stdout.write(`Engine version ${ENGINE_VERSION}, build ${GIT_COMMIT}\n`);
      return 0;
    }
    if (actions.help) {
      process.stdout.write(`${daemonHelp(process.env)}${await pluginsHelp(defaultResolveOptions())}`);
      return 0;
    }
  } catch (err) {
    return fail(`${(err as Error).message}\nSee 'engined --help'.`);
  }

  // the crash tests' kill points (core/kill-points.ts): armed once the daemon serves
  configureKillPoints("ENGINE_DAEMON", process.env, { armed: false });
  const host = readHostFacts();
  let loaded: LoadedConfig;
  try {
    loaded = loadConfig(flags, process.env, ruleHost(host));
  } catch (err) {
    return fail((err as Error).message);
  }
  const { config } = loaded;
  if (config.validate) {
    // What can be judged without loading a driver: whose the storage options are.
    try {
      await validateStorageOptions(config["storage-driver"], config["data-root"], config["storage-opt"], defaultResolveOptions().builtinDir);
    } catch (err) {
      return fail((err as Error).message);
    }
    process.stdout.write("configuration OK\n");
    return 0;
  }

  // The daemon's own umask, 0022 whatever its caller's was, as dockerd sets its own: a caller's
  // 0002 or 0000 would widen what the daemon writes, a 0077 would take from files containers
  // must read (what a layer's tar or a volume gives, with the modes Docker gives them). Private
  // state is created with modes of its own (core/state-modes.ts), which the umask only narrows.
  // It is inherited by the supervisor, conmon and the runtime (a container's process gets its
  // own, from its spec).
  process.umask(0o022);
  const log = createLogger({
    level: config.debug ? "debug" : config["log-level"],
    format: config["log-format"],
    rawLogs: config["raw-logs"],
  });
  const configuredAt = performance.now();
  log.info(
    { version: ENGINE_VERSION, commit: GIT_COMMIT, pid: process.pid, loadMs: Math.round(loadedAt), configMs: Math.round(configuredAt - loadedAt) },
    "starting engined",
  );

  // Signals are handled from before start-up: a SIGTERM that arrives while the daemon starts
  // (or just as it says it is ready) stops it gracefully instead of killing it.
  let daemon: RunningDaemon | undefined;
  let exitWith: (code: number) => void = () => {};
  const exited = new Promise<number>((resolve) => (exitWith = resolve));
  let signals = 0;
  let phase: DaemonPhase = "starting";
  let faultAtStart = false;
  const stop = (reason: "signal" | "error") => {
    if (!daemon) return;
    phase = "stopping";
    daemon.stop(reason).then(() => exitWith(reason === "signal" ? 0 : 1), () => exitWith(1));
  };
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) {
      log.warn({ signal }, "second signal: exiting at once");
      exitWith(1);
      return;
    }
    log.info({ signal }, "processing signal");
    stop("signal");
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  process.on("SIGHUP", () => void daemon?.reload());
  // A fault nothing caught is logged and the daemon goes on serving; one during the start is
  // fatal (host/process-faults.ts says why, and what else stays fatal).
  handleProcessFaults({ log, phase: () => phase, fatal: () => void (faultAtStart = true) });

  configureProxyEnv(loaded, process.env, log);
  try {
    daemon = await startDaemon({ loaded, flags, host, env: process.env, log });
  } catch (err) {
    log.fatal({ code: err instanceof EngineError ? err.code : undefined }, `failed to start daemon: ${(err as Error).message}`);
    return 1;
  }
  if (faultAtStart) {
    stop("error");
    return exited;
  }
  phase = "serving";
  log.info({ initMs: Math.round(performance.now() - configuredAt), totalMs: Math.round(performance.now()) }, "daemon has completed initialization");
  afterFirstAnswer(daemon, startDone);
  armKillPoints();
  if (signals > 0) stop("signal");
  return exited;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`engined: ${String(err?.stack ?? err)}\n`);
    process.exit(1);
  },
);
