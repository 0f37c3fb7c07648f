/**
 * Runs enabled plugins as containers of engined's own supervisor, in the supervisor namespace
 * `--supervisor-plugins-namespace` (default `plugins.engine`), served by a supervisor of its own
 * (`<exec-root>/managed-plugins/supervisor`), as the CRI keeps its containers in `k8s.io`: so a
 * plugin never shows among Docker's containers (`docker ps`), nor they among plugins.
 *
 * A start: the socket folder `<exec-root>/plugins/<id>/` made (private to root, or to the
 * configuration's User), Docker's init-layer entries made in the root filesystem, the
 * propagated mount (if any) made a shared mount, the bundle written by the runtime plugin
 * (plugin-spec.ts), the container run through conmon and runc, its output to a json-file log
 * in the plugin's folder (10 MiB, 2 files); then the socket waited for and `Plugin.Activate`
 * asked, both within the enable's timeout. A start that fails undoes itself.
 *
 * A stop: SIGTERM, SIGKILL after 10 seconds (Docker's shutdownPlugin), the supervisor's and
 * the runtime's state of it removed, the bundle and socket folder removed, the propagated
 * mount unmounted: no process, mount or runtime state is left.
 */
import { chown, mkdir, realpath, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Logger } from "pino";
import type { RuntimeDriver } from "../../core/contracts/runtime.js";
import { execFileAsync } from "../../core/exec-file.js";
import { mount } from "../../core/fs/mount.js";
import type { RuleHost } from "../../core/options/rules.js";
import type { DaemonConfig } from "../../core/options/table.js";
import { PluginClient } from "../remote-plugins/client.js";
import type { PluginEndpoint } from "../remote-plugins/discover.js";
import { connectUnix } from "../remote-plugins/unix-connect.js";
import { makeInitLayerEntries } from "../containers/init-layer.js";
import { selectRuntime } from "../containers/runtime-select.js";
import { SupervisorLink } from "../containers/supervisor-link.js";
import { SupervisorClientError } from "../supervisor/client.js";
import type { Plugin } from "./plugin-object.js";
import { pluginSpec, pluginSpecContext } from "./plugin-spec.js";
import { unmountUnder } from "./plugin-store.js";

export interface PluginRunnerDeps {
  execRoot: string;
  config: () => DaemonConfig;
  host: RuleHost;
  runtime: () => RuntimeDriver;
  log: Logger;
  /** Whether a plugin is ours to run (starting or running). */
  has: (id: string) => boolean;
  /** The plugins the supervisor runs for us, and since when (its catch-up after a reconnect). */
  running: () => { id: string; startedAt: string }[];
  /** A plugin's container ended without being stopped. */
  onExit: (id: string, exitCode: number) => void;
}

/** How long a stopped plugin has between SIGTERM and SIGKILL (Docker's shutdownPlugin). */
const STOP_SECONDS = 10;
const POLL_MS = 100;

export class PluginRunner {
  readonly link: SupervisorLink;

  constructor(private readonly deps: PluginRunnerDeps) {
    this.link = new SupervisorLink({
      containers: {
        has: (id) => deps.has(id),
        list: () => deps.running().map((r) => ({ Id: r.id, State: { Running: true, StartedAt: r.startedAt } as never })),
      },
      config: deps.config,
      execRoot: deps.execRoot,
      own: { home: join(deps.execRoot, "managed-plugins", "supervisor"), namespace: deps.config()["supervisor-plugins-namespace"] },
      log: deps.log.child({ part: "plugin-supervisor" }),
      onExit: (id, code) => deps.onExit(id, code),
    });
  }

  /** The plugin's socket folder, bound at /run/docker/plugins inside it. */
  socketDir(id: string): string {
    return join(this.deps.execRoot, "plugins", id);
  }

  /** Where the daemon reaches the plugin. */
  endpoint(plugin: Plugin, name: string, timeoutMs = 30_000): PluginEndpoint {
    return { name, source: `managed plugin ${plugin.Name} (${plugin.Id})`, address: `unix://${join(this.socketDir(plugin.Id), plugin.Config.Interface.Socket)}`, timeoutMs };
  }

  private bundleDir(id: string): string {
    return join(this.deps.execRoot, "managed-plugins", "bundles", id);
  }

  /** Whether the supervisor runs the plugin now (a daemon started again finds it so). */
  async isRunning(id: string): Promise<boolean> {
    if (!this.link.mayHoldContainers() && !this.link.used) return false;
    const sup = await this.link.client();
    const state = await sup.get(id).catch((err: Error) => {
      if (err instanceof SupervisorClientError && err.status === 404) return undefined;
      throw err;
    });
    return state?.status === "running";
  }

  /**
   * Starts the plugin and waits until it answers; throws (having undone the start) when it does
   * not within `timeoutSeconds`. `onRun` is told once the supervisor runs it.
   */
  async start(plugin: Plugin, pluginDir: string, timeoutSeconds: number, onRun: () => void): Promise<void> {
    const id = plugin.Id;
    const c = plugin.Config;
    const missing = (c.Mounts ?? []).find((m) => m.Source === null);
    if (missing) throw new Error("mount source is not specified");
    const paths = { rootfs: join(pluginDir, "rootfs"), bundleDir: this.bundleDir(id), socketDir: this.socketDir(id), propagatedRoot: join(pluginDir, "propagated-mount") };
    try {
      await rm(paths.socketDir, { recursive: true, force: true });
      await mkdir(paths.socketDir, { recursive: true, mode: 0o700 });
      if (c.User.UID || c.User.GID) await chown(paths.socketDir, c.User.UID ?? 0, c.User.GID ?? 0);
      makeInitLayerEntries(paths.rootfs);
      if (c.PropagatedMount) await this.sharePropagated(paths.propagatedRoot, paths.rootfs, c.PropagatedMount);
      const daemon = this.deps.config();
      const sup = await this.link.client();
      const runtime = selectRuntime(daemon, undefined, this.deps.host);
      await this.deps.runtime().writeBundle(pluginSpecContext(plugin, paths, daemon, this.deps.host), async (base) => pluginSpec(base, plugin, paths));
      await sup.run({
        id,
        bundle: paths.bundleDir,
        runtime: { path: runtime.path, args: runtime.args },
        log: {
          driver: "json-file",
          context: { containerId: id, containerName: plugin.Name, imageName: plugin.Name, imageId: id, labels: {}, env: [], logDir: pluginDir, options: { "max-size": "10m", "max-file": "2" } },
        },
        ...(this.deps.runtime().noPivot(daemon) ? { noPivot: true } : {}),
      });
      onRun();
      await this.waitReady(plugin, timeoutSeconds);
    } catch (err) {
      await this.stop(id).catch((e: Error) => this.deps.log.warn({ err: e, plugin: id }, "undoing a failed plugin start failed"));
      throw err;
    }
  }

  /** The socket answers a connection, then `Plugin.Activate` lists what the plugin implements. */
  async waitReady(plugin: Plugin, timeoutSeconds: number): Promise<void> {
    const deadline = Date.now() + Math.max(1, timeoutSeconds) * 1000;
    const endpoint = this.endpoint(plugin, plugin.Name);
    const socket = endpoint.address.slice("unix://".length);
    let last = "";
    for (;;) {
      last = await dial(socket);
      if (last === "") break;
      if (Date.now() >= deadline) throw new Error(`no plugin listens on ${socket} after ${timeoutSeconds}s: ${last}`);
      if (!(await this.isRunning(plugin.Id))) throw new Error(`its process ended before it listened on ${socket}; see ${plugin.Id}-json.log in its folder`);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    const client = new PluginClient({ ...endpoint, timeoutMs: Math.max(1000, deadline - Date.now()) });
    const answer = (await client.call("Plugin.Activate", undefined)) as { Implements?: unknown };
    if (!Array.isArray(answer?.Implements)) throw new Error(`Plugin.Activate: the answer lists no "Implements": ${JSON.stringify(answer)}`);
  }

  /** Stops every plugin the supervisor runs that `keep` does not want (a crash cut its disable short); starts no supervisor. */
  async sweep(keep: (id: string) => boolean): Promise<void> {
    if (!this.link.mayHoldContainers()) return;
    const sup = await this.link.client();
    for (const state of await sup.list()) {
      if (keep(state.id)) continue;
      this.deps.log.info({ plugin: state.id }, "stopping a plugin that is not enabled");
      await this.stop(state.id);
    }
  }

  /** Stops the plugin and removes everything its run made; safe to repeat. */
  async stop(id: string): Promise<void> {
    if (this.link.used || this.link.mayHoldContainers()) {
      const sup = await this.link.client();
      await sup.stop(id, STOP_SECONDS, "TERM").catch((err: Error) => {
        if (!(err instanceof SupervisorClientError && (err.status === 404 || err.status === 409))) throw err;
      });
      await this.link.forget(id);
    }
    await rm(this.bundleDir(id), { recursive: true, force: true });
    await rm(this.socketDir(id), { recursive: true, force: true });
  }

  /** After a stop, what the run mounted in the plugin's folder goes too (the propagated mount, in both places). */
  async releaseMounts(pluginDir: string): Promise<void> {
    await unmountUnder(pluginDir);
  }

  /**
   * `<plugin>/propagated-mount` as a shared mount of itself, bound also at the PropagatedMount's
   * place in the root filesystem, as Docker binds it: what the plugin mounts there is seen on the
   * host at `<rootfs><PropagatedMount>/...`, where the paths a volume plugin answers (relative to
   * its root filesystem) lead.
   */
  private async sharePropagated(root: string, rootfs: string, propagatedMount: string): Promise<void> {
    const inRootfs = join(rootfs, propagatedMount);
    await mkdir(root, { recursive: true, mode: 0o755 });
    await unmountUnder(root);
    await mount(root, root, "bind");
    // (the mount helper knows no propagation flags; mount(8) does)
    await execFileAsync("mount", ["--make-rshared", root]);
    await insideRoot(rootfs, inRootfs);
    await mkdir(inRootfs, { recursive: true, mode: 0o755 });
    await insideRoot(rootfs, inRootfs);
    await unmountUnder(inRootfs);
    await execFileAsync("mount", ["--rbind", root, inRootfs]);
  }

  close(keep: boolean): Promise<void> {
    return this.link.close(keep);
  }
}

/**
 * Refuses a place in the root filesystem that leads out of it: the root filesystem came in a
 * tar, and a symlink there (`data -> /etc`) must not make the host's folder a mount point.
 * Checked on the deepest part that exists, before and after it is made.
 */
async function insideRoot(rootfs: string, path: string): Promise<void> {
  const root = await realpath(rootfs);
  let existing = path;
  while (!(await realpath(existing).then(() => true, () => false))) existing = dirname(existing);
  const real = await realpath(existing);
  if (real !== root && !real.startsWith(`${root}/`)) throw new Error(`the PropagatedMount ${path.slice(rootfs.length)} leads out of the plugin's root filesystem (to ${real})`);
}

/** "" once something accepts a connection at `socket`; else why not. */
function dial(socket: string): Promise<string> {
  return new Promise((resolve) => {
    const conn = connectUnix(socket);
    conn.once("connect", () => {
      conn.destroy();
      resolve("");
    });
    conn.once("error", (err) => resolve(err.message));
  });
}
