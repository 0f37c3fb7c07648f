/**
 * storage.btrfs: layers are btrfs subvolumes, a child layer a snapshot of its parent's (see
 * btrfs.ts and README.md).
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import type { EnginePlugin, HostFacts } from "../../core/contracts/plugin.js";
import { backingFilesystemSync, kernelLacksFilesystem } from "../../core/storage/backing-fs.js";
import { manifest } from "./manifest.js";

import { createBtrfsDriver } from "./btrfs.js";

export { createBtrfsDriver };

export interface BtrfsHostProbe {
  /** `/proc/filesystems`. */
  filesystems?: string;
  /** Whether the `btrfs` command runs. */
  hasCommand?: boolean;
  /** The filesystem of the data root (`btrfs`, `extfs`...). */
  dataRootFs?: string;
}

function commandRuns(): boolean {
  const r = spawnSync("btrfs", ["--version"], { stdio: "ignore", timeout: 10_000 });
  return !r.error && r.status === 0;
}

/** `true` when the kernel has btrfs, btrfs-progs is installed and the data root is on btrfs; else why not. */
export function btrfsSupported(host: HostFacts, probe: BtrfsHostProbe = {}): true | string {
  if (host.platform !== "linux") return `btrfs needs Linux, this host is ${host.platform}`;
  const noKernel = kernelLacksFilesystem("btrfs", probe.filesystems);
  if (noKernel) return noKernel;
  if (!(probe.hasCommand ?? commandRuns())) return "the btrfs command is missing (install the btrfs-progs package)";
  if (host.dataRoot !== undefined) {
    const home = join(host.dataRoot, "btrfs");
    const fs = probe.dataRootFs ?? backingFilesystemSync(home);
    if (fs !== "btrfs") return `the data root ${host.dataRoot} is on ${fs}, not btrfs`;
  }
  return true;
}

const plugin: EnginePlugin = {
  manifest,
  supported: (host) => btrfsSupported(host),
  apply(hooks) {
    // Cheap: the driver is made (and its options checked) only when the daemon asks for it.
    hooks.createStorageDriver.for("btrfs").tapPromise(manifest.id, (ctx) => createBtrfsDriver(ctx));
  },
};

export default plugin;
