/**
 * storage.fuse-overlayfs: the overlay layout (core/storage/overlay-layout.ts) mounted through
 * fuse-overlayfs instead of the kernel's overlay (see fuse-overlayfs.ts and README.md).
 */
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import type { EnginePlugin, HostFacts } from "../../core/contracts/plugin.js";
import { manifest } from "./manifest.js";
import { createFuseOverlayfsDriver } from "./fuse-overlayfs.js";

export { createFuseOverlayfsDriver };

/** Where the host's fuse-overlayfs, FUSE device and mount(8) helper are looked for. */
export interface FuseProbe {
  /** The PATH the fuse-overlayfs binary is looked up in. */
  path?: string;
  /** The FUSE device. */
  device?: string;
  /** Folders where mount(8) finds `mount.fuse3` (or `mount.fuse`) for `-t fuse.<type>`. */
  helperDirs?: readonly string[];
}

/** `true` when fuse-overlayfs can mount here (binary, /dev/fuse, mount(8)'s FUSE helper), else why not. */
export function fuseOverlayfsSupported(host: HostFacts, probe: FuseProbe = {}): true | string {
  if (host.platform !== "linux") return `fuse-overlayfs needs Linux, this host is ${host.platform}`;
  const path = probe.path ?? process.env.PATH ?? "";
  const binary = path.split(delimiter).filter(Boolean).some((dir) => existsSync(join(dir, "fuse-overlayfs")));
  if (!binary) return "the fuse-overlayfs binary is not on PATH (Debian package fuse-overlayfs)";
  const device = probe.device ?? "/dev/fuse";
  if (!existsSync(device)) return `${device} is missing: the kernel has no FUSE (modprobe fuse), or a container was not given the device`;
  const helperDirs = probe.helperDirs ?? ["/sbin", "/usr/sbin", "/bin", "/usr/bin"];
  const helper = helperDirs.some((dir) => existsSync(join(dir, "mount.fuse3")) || existsSync(join(dir, "mount.fuse")));
  if (!helper) return "mount(8) has no FUSE helper (mount.fuse3, Debian package fuse3) to run fuse-overlayfs with";
  return true;
}

const plugin: EnginePlugin = {
  manifest,
  supported: (host) => fuseOverlayfsSupported(host),
  apply(hooks) {
    hooks.createStorageDriver.for("fuse-overlayfs").tapPromise(manifest.id, (ctx) => createFuseOverlayfsDriver(ctx));
  },
};

export default plugin;
