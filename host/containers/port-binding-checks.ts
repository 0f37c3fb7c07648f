/**
 * The create-time check of a container's PortBindings, as Docker's daemon makes it (its
 * validatePortBindings, with go-connections' nat): each container port (the key without its
 * `/proto`) a number of 0..65535 or nothing, each binding's HostPort nothing, a port or a range
 * `start-end` (a `/proto` after it allowed), refused whole in Docker's words. Without it a bad
 * one was taken at create and only refused by the networking at start.
 */
import type { HostConfig } from "../../core/containers/container-config.js";
import { errors } from "../../core/errors.js";

/** nat.SplitProtoPort's port: the part before the first `/` ("" for nothing before it). */
const portPart = (raw: string) => raw.split("/")[0];

/** strconv.ParseUint(s, 10, 16) succeeds. */
const uint16 = (s: string) => /^\d+$/.test(s) && Number(s) <= 65535;

/** nat.ParsePortRangeToInt succeeds: nothing, a port, or `start-end` with end >= start. */
function portRange(s: string): boolean {
  if (s === "") return true;
  if (!s.includes("-")) return uint16(s);
  const [start, end] = s.split("-");
  return uint16(start) && uint16(end) && Number(end) >= Number(start);
}

export function checkPortBindings(bindings: HostConfig["PortBindings"]): void {
  for (const [key, list] of Object.entries(bindings ?? {})) {
    const port = portPart(key);
    if (port !== "" && !uint16(port)) throw errors.networkInvalidPort(port);
    for (const b of list ?? []) {
      const hostPort = b?.HostPort ?? "";
      if (!portRange(portPart(hostPort))) throw errors.networkInvalidPort(hostPort);
    }
  }
}
