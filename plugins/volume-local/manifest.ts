import type { PluginManifest } from "../../core/contracts/plugin.js";

/**
 * Volume options are not namespaced (they come from `docker volume create -o` and a mount's
 * `VolumeOptions.DriverConfig.Options`), so the keys below are Docker's plain names.
 */
export const manifest: PluginManifest = {
  id: "volume.local",
  kind: "volume",
  description:
    "Keeps each volume as a folder, <data-root>/volumes/<name>/_data, or mounts a filesystem there (type, device, o) as mount(8) would. The default volume driver.",
  options: {
    type: { description: "The filesystem type to mount (tmpfs, nfs, none for a bind); needs device" },
    device: { description: "What to mount: a device, a remote share, or a host folder with o=bind; needs type" },
    o: { description: "Comma-separated mount options (size=64m, bind, addr=...); needs type and device" },
    size: { description: "A quota on the volume; refused: this host's local driver has no quota support" },
  },
  capabilities: ["usage"],
};
