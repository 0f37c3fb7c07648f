/**
 * storage.zfs: layers as ZFS datasets, children as clones of their parent's snapshots (see
 * zfs-driver.ts and README.md). The plugin is for hosts with ZFS only: the kernel module
 * (`zfs` in /proc/filesystems) and the `zfs` command.
 */
import { readFileSync } from "node:fs";
import type { EnginePlugin, HostFacts } from "../../core/contracts/plugin.js";
import { findOnPath } from "../../core/find-command.js";
import { manifest } from "./manifest.js";
import { createZfsDriver } from "./zfs-driver.js";

export { createZfsDriver };

/** What `zfsSupported` looks at; tests give their own. */
export interface ZfsProbe {
  /** The text of /proc/filesystems. */
  filesystems?: string;
  /** Where the zfs command is, or undefined when it is not on PATH. */
  zfsCommand?: string | undefined;
}

/** `true` when the kernel knows zfs and the zfs command is there, else every reason it is not. */
export function zfsSupported(host: HostFacts, probe?: ZfsProbe): true | string {
  if (host.platform !== "linux") return `zfs needs Linux, this host is ${host.platform}`;
  let filesystems = probe?.filesystems;
  if (filesystems === undefined) {
    try {
      filesystems = readFileSync("/proc/filesystems", "utf8");
    } catch (err) {
      return `cannot read /proc/filesystems: ${(err as Error).message}`;
    }
  }
  const command = probe && "zfsCommand" in probe ? probe.zfsCommand : findOnPath("zfs");
  const missing: string[] = [];
  if (!filesystems.split("\n").some((line) => line.trim().split(/\s+/).pop() === "zfs")) {
    missing.push("the kernel has no zfs filesystem (not in /proc/filesystems; load the zfs module: modprobe zfs, Debian package zfs-dkms)");
  }
  if (!command) missing.push("the zfs command is not on PATH (Debian package zfsutils-linux)");
  return missing.length === 0 ? true : `this host has no ZFS: ${missing.join("; and ")}`;
}

const plugin: EnginePlugin = {
  manifest,
  supported: (host) => zfsSupported(host),
  apply(hooks) {
    // Cheap: the driver is made (and its options and dataset checked) only when the daemon asks for it.
    hooks.createStorageDriver.for("zfs").tapPromise(manifest.id, (ctx) => createZfsDriver(ctx));
  },
};

export default plugin;
