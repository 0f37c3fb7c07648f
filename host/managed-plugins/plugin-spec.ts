/**
 * The OCI spec a managed plugin runs with, as Docker's InitSpec makes it (moby plugin/v2): the
 * runtime plugin's base spec for a container (default capabilities, masked paths, /proc, /dev
 * and the rest) made from the plugin's configuration, then changed where a plugin differs from
 * a container:
 *
 * - the process is the configuration's Entrypoint followed by the settings' Args, in WorkDir
 *   (`/` without one), with `PATH` and the settings' Env only, no terminal, no seccomp profile
 *   (Docker applies none to plugins) and the configuration's Linux capabilities added;
 * - the plugin's socket folder (`<exec-root>/plugins/<id>`) is bound at `/run/docker/plugins`,
 *   where the plugin makes the socket its Interface names;
 * - the configuration's Mounts (their sources as set), its devices (`rwm`), or every device with
 *   AllowAllDevices;
 * - network `host` shares the host's network namespace, any other type gets one of its own with
 *   nothing in it; with a type given, the host's /etc/hosts and /etc/resolv.conf are bound in
 *   read-only, as Docker binds them;
 * - IpcHost and PidHost share the host's IPC and PID namespaces;
 * - PropagatedMount: `<plugin>/propagated-mount` bound there, rshared, the root's propagation
 *   rshared, so that what the plugin mounts there is seen by the host (volume plugins).
 *
 * User: Docker's InitSpec leaves the process root whatever the configuration's User says; here
 * the process runs as that uid and gid, and its socket folder is theirs.
 */
import type { OciSpec, SpecContext } from "../../core/contracts/runtime.js";
import type { DaemonConfig } from "../../core/options/table.js";
import type { RuleHost } from "../../core/options/rules.js";
import type { Plugin } from "./plugin-object.js";

/** Where a plugin sees its socket folder (Docker's defaultPluginRuntimeDestination). */
export const PLUGIN_SOCKET_DESTINATION = "/run/docker/plugins";
const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export interface PluginSpecPaths {
  rootfs: string;
  bundleDir: string;
  socketDir: string;
  /** `<plugin>/propagated-mount`, for a configuration with a PropagatedMount. */
  propagatedRoot: string;
}

/** What the runtime plugin makes its base spec from: the plugin's configuration in a container's terms. */
export function pluginSpecContext(plugin: Plugin, paths: PluginSpecPaths, daemon: DaemonConfig, host: RuleHost): SpecContext {
  const c = plugin.Config;
  const user = c.User.UID || c.User.GID ? `${c.User.UID ?? 0}:${c.User.GID ?? 0}` : "";
  return {
    containerId: plugin.Id,
    config: { Image: "", Env: [], Cmd: [], User: user, WorkingDir: c.WorkDir || "/", Labels: {}, Tty: false },
    command: [...(c.Entrypoint ?? []), ...plugin.Settings.Args],
    hostConfig: {
      NetworkMode: c.Network.Type === "host" ? "host" : "none",
      PidMode: c.PidHost ? "host" : "",
      IpcMode: c.IpcHost ? "host" : "private",
      CapAdd: c.Linux.Capabilities ?? [],
      Devices: plugin.Settings.Devices.filter((d) => d.Path).map((d) => ({ PathOnHost: d.Path!, PathInContainer: d.Path!, CgroupPermissions: "rwm" })),
      Init: false,
      Privileged: false,
    } as SpecContext["hostConfig"],
    imageConfig: {},
    daemon,
    host,
    rootfs: paths.rootfs,
    bundleDir: paths.bundleDir,
    runtime: { name: "ocirun" },
  };
}

/** The base spec changed into the plugin's (see the file's comment). */
export function pluginSpec(base: OciSpec, plugin: Plugin, paths: PluginSpecPaths): OciSpec {
  const c = plugin.Config;
  const spec = structuredClone(base);
  const process = spec.process!;
  process.terminal = false;
  process.env = [`PATH=${DEFAULT_PATH}`, ...plugin.Settings.Env];
  process.cwd = c.WorkDir || "/";
  delete process.consoleSize;
  const caps = process.capabilities!;
  caps.inheritable = [...(caps.bounding ?? [])];
  const linux = spec.linux!;
  delete linux.seccomp;
  delete linux.sysctl;
  delete spec.hostname;
  // the base spec always has a network namespace of its own: `host` shares the host's
  if (c.Network.Type === "host") linux.namespaces = (linux.namespaces ?? []).filter((n) => n.type !== "network");
  if (c.Linux.AllowAllDevices) linux.resources = { ...linux.resources, devices: [{ allow: true, access: "rwm" }] };

  const mounts = [...(c.Mounts ?? [])].map((m) => ({ destination: m.Destination, type: m.Type, source: m.Source ?? "", options: m.Options ?? [] }));
  if (c.PropagatedMount) {
    mounts.unshift({ destination: c.PropagatedMount, type: "bind", source: paths.propagatedRoot, options: ["rbind", "rw", "rshared"] });
    linux.rootfsPropagation = "rshared";
  }
  mounts.push({ destination: PLUGIN_SOCKET_DESTINATION, type: "bind", source: paths.socketDir, options: ["rbind", "rshared"] });
  if (c.Network.Type !== "") {
    mounts.push({ destination: "/etc/hosts", type: "bind", source: "/etc/hosts", options: ["rbind", "ro"] });
    mounts.push({ destination: "/etc/resolv.conf", type: "bind", source: "/etc/resolv.conf", options: ["rbind", "ro"] });
  }
  // a mount the plugin's settings place under /dev replaces the runtime's own there
  const userDev = new Set(plugin.Settings.Mounts.map((m) => m.Destination).filter((d) => d.startsWith("/dev/")));
  spec.mounts = [...(spec.mounts ?? []).filter((m) => !userDev.has(m.destination)), ...mounts];
  return spec;
}
