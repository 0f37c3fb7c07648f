/**
 * Docker's `Config.NetworkDisabled`: the container runs in a network namespace of its own with
 * its loopback alone, on no network, its hosts and resolv.conf the image's; unless it shares
 * the host's or another container's namespace, which the setting leaves as they are.
 */
import type { ContainerRecord } from "./container-store.js";

export function networkDisabled(c: Pick<ContainerRecord, "Config" | "HostConfig">): boolean {
  const mode = c.HostConfig.NetworkMode ?? "";
  return c.Config.NetworkDisabled === true && mode !== "host" && !mode.startsWith("container:");
}
