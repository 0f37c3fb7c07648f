/**
 * One running daemon, put together from its configuration: roots and pid file, plugins,
 * the API, the listeners. `startDaemon` undoes what it did when a later step fails, and the
 * daemon's `stop` undoes all of it, so that a test (or a second daemon on the same host) can
 * start and stop daemons without leaving anything behind.
 */
import { rmSync } from "node:fs";
import type { Logger } from "pino";
import { createHooks, type EngineHooks, type ShutdownReason } from "../core/hooks.js";
import type { DaemonConfig } from "../core/options/table.js";
import { buildApi, type Api, type LoadLimits } from "./api/app.js";
import { callEach } from "./call-each.js";
import { readHostFacts } from "./host-facts.js";
import { openListeners, type Listener } from "./listeners/listen.js";
import { formatAddress, parseHost, type ListenAddress } from "./listeners/parse-host.js";
import { takeActivationFds } from "./listeners/socket-activation.js";
import { loadTlsOptions } from "./listeners/tls-options.js";
import { claimPidfile } from "./pidfile.js";
import { defaultResolveOptions, type ResolveOptions } from "./plugins/resolve-plugin.js";
import { loadPlugins, type AppliedPlugin, type PluginSelection } from "./plugins/plugin-loader.js";
import { prepareRoots, type Roots } from "./roots.js";
import { buildSystemInfo, buildVersionInfo, loadDaemonId, type InfoSources } from "./system-info.js";

export interface DaemonOptions {
  config: DaemonConfig;
  /** Options the operator gave explicitly (an explicit missing `--group` is an error). */
  given: ReadonlySet<string>;
  env: NodeJS.ProcessEnv;
  log: Logger;
  resolve?: ResolveOptions;
  load?: LoadLimits;
}

export interface RunningDaemon {
  hooks: EngineHooks;
  roots: Roots;
  plugins: AppliedPlugin[];
  listeners: Listener[];
  api: Api;
  stop(reason: ShutdownReason): Promise<void>;
}

export async function startDaemon(opts: DaemonOptions): Promise<RunningDaemon> {
  const { config, log, env } = opts;
  const activationFds = takeActivationFds(env);
  const tlsOn = config.tls || config.tlsverify;
  // Parse every address before anything is created, so that a typo changes nothing.
  const addresses = listenAddresses(config.host, tlsOn);
  const tls = tlsOn
    ? loadTlsOptions({ verify: config.tlsverify, cacert: config.tlscacert, cert: config.tlscert, key: config.tlskey })
    : undefined;
  const roots = prepareRoots(config["data-root"], config["exec-root"], env);
  const undo: (() => Promise<void> | void)[] = [claimPidfile(config.pidfile)];
  const hooks = createHooks();
  let shutdownReason: ShutdownReason = "error";
  try {
    const host = readHostFacts();
    const plugins = await loadPlugins(pluginSelections(config), {
      hooks,
      log,
      host,
      dataRoot: roots.dataRoot,
      execRoot: roots.execRoot,
      resolve: opts.resolve ?? defaultResolveOptions(),
    });
    undo.push(() => callEach(hooks.shutdown, [shutdownReason], (tap, err) => log.error({ tap, err }, "shutdown step failed")));
    await hooks.start.promise();

    const warnings = insecureTcpWarnings(addresses, Boolean(tls?.requestCert));
    const sources: InfoSources = {
      config: () => config,
      host,
      hooks,
      dataRoot: roots.dataRoot,
      daemonId: loadDaemonId(roots.dataRoot),
      authorization: () => plugins.filter((p) => p.plugin.manifest.kind === "authz").map((p) => p.id),
      warnings: () => warnings,
    };
    const api = await buildApi({
      hooks,
      log: log.child({ component: "api" }),
      load: opts.load,
      systemInfo: () => buildSystemInfo(sources),
      versionInfo: () => buildVersionInfo(sources),
    });
    undo.push(() => api.app.close());

    const listeners = await openListeners(addresses, {
      handler: api.handler,
      tls,
      group: config.group,
      groupGiven: opts.given.has("group"),
      activationFds,
      log,
    });
    undo.push(() => closeListeners(listeners, addresses));
    for (const l of listeners) log.info({ address: l.address }, `API listen on ${l.address}`);
    hooks.listening.call({ addresses: listeners.map((l) => l.address) });

    let stopping: Promise<void> | undefined;
    return {
      hooks,
      roots,
      plugins,
      listeners,
      api,
      stop: (reason) => {
        shutdownReason = reason;
        return (stopping ??= stopAll(undo, reason, log));
      },
    };
  } catch (err) {
    await unwind(undo, log);
    throw err;
  }
}

/** `-H` values, or the default socket; an empty `-H` counts as none. */
function listenAddresses(hosts: readonly string[], tls: boolean): ListenAddress[] {
  const given = hosts.filter((h) => h.trim() !== "");
  return (given.length ? given : [""]).map((h) => parseHost(h, tls));
}

function pluginSelections(config: DaemonConfig): PluginSelection[] {
  return config["authorization-plugin"].map((name) => ({ kind: "authz" as const, name }));
}

function insecureTcpWarnings(addresses: readonly ListenAddress[], verified: boolean): string[] {
  if (verified) return [];
  return addresses
    .filter((a) => a.proto === "tcp")
    .map(
      (a) =>
        `WARNING: API is accessible on ${formatAddress(a).replace("tcp://", "http://")} without encryption.\n` +
        "         Access to the remote API is equivalent to root access on the host. Refer\n" +
        "         to the 'Daemon socket option' section of the documentation for more information.",
    );
}

async function closeListeners(listeners: readonly Listener[], addresses: readonly ListenAddress[]): Promise<void> {
  await Promise.allSettled(listeners.map((l) => l.close()));
  for (const a of addresses) if (a.proto === "unix") rmSync(a.path, { force: true });
}

async function stopAll(undo: (() => Promise<void> | void)[], reason: ShutdownReason, log: Logger): Promise<void> {
  log.info({ reason }, "daemon shutting down");
  await unwind(undo, log);
  log.info("daemon shut down");
}

/** Runs the undo steps, newest first; one that fails does not stop the others. */
async function unwind(undo: (() => Promise<void> | void)[], log: Logger): Promise<void> {
  for (const step of [...undo].reverse()) {
    try {
      await step();
    } catch (err) {
      log.error({ err }, "cleanup step failed");
    }
  }
}
