/**
 * Per-interface sysctls of an endpoint (`com.docker.network.endpoint.sysctls` in its DriverOpts,
 * Docker 27+): `net.ipv4.conf.IFNAME.log_martians=1,net.ipv6.conf.IFNAME.accept_ra=2`, the word
 * `IFNAME` standing for the container's interface on that network, whatever it is named
 * (`eth1`, a `com.docker.network.endpoint.ifname`). Only `net.ipv4.`, `net.ipv6.` and
 * `net.mpls.` settings are taken, as Docker takes them: the others are no interface's.
 * Checked at create and connect (a 400 for a malformed list), written in the container's network
 * namespace once the interface is there, before the container's process starts.
 *
 * The Docker CLI lowercases the `--network` field it comes in (`ifname`); the word is read in
 * either case.
 */
import { execFileAsync } from "../../core/exec-file.js";
import { errors } from "../../core/errors.js";

export const SYSCTLS_OPTION = "com.docker.network.endpoint.sysctls";

const PREFIXES = ["net.ipv4.", "net.ipv6.", "net.mpls."];
const IFNAME = /(^|\.)ifname(\.|$)/i;

export interface EndpointSysctl {
  key: string;
  value: string;
}

/** The settings a DriverOpts value names, checked; none without the option. */
export function endpointSysctls(driverOpts: Record<string, string> | null | undefined): EndpointSysctl[] {
  const raw = driverOpts?.[SYSCTLS_OPTION];
  if (!raw) return [];
  return raw
    .split(",")
    .filter((entry) => entry.trim() !== "")
    .map((entry) => {
      const eq = entry.indexOf("=");
      const key = (eq < 0 ? entry : entry.slice(0, eq)).trim();
      if (eq < 0 || key === "") throw errors.networkInvalid(`invalid sysctl ${JSON.stringify(entry)} in ${SYSCTLS_OPTION}: expected key=value`);
      if (!PREFIXES.some((p) => key.startsWith(p))) {
        throw errors.networkInvalid(`invalid sysctl ${JSON.stringify(key)} in ${SYSCTLS_OPTION}: only net.ipv4., net.ipv6. and net.mpls. settings can be set per interface`);
      }
      if (!IFNAME.test(key)) throw errors.networkInvalid(`invalid sysctl ${JSON.stringify(key)} in ${SYSCTLS_OPTION}: the interface must be named IFNAME`);
      return { key, value: entry.slice(eq + 1).trim() };
    });
}

/** Writes the settings for interface `ifname` in the network namespace `sandbox` (one process for all). */
export async function applyEndpointSysctls(sandbox: string, ifname: string, sysctls: readonly EndpointSysctl[]): Promise<void> {
  if (sysctls.length === 0) return;
  const args = sysctls.map(({ key, value }) => `${key.replace(IFNAME, (_m, before: string, after: string) => `${before}${ifname}${after}`)}=${value}`);
  try {
    await execFileAsync("nsenter", [`--net=${sandbox}`, "--", "sysctl", "-q", "-w", ...args], { timeout: 10_000 });
  } catch (err) {
    const why = String((err as { stderr?: string }).stderr || (err as Error).message).trim();
    // (a setting the kernel does not have, or a value it refuses: the request's)
    throw errors.networkInvalid(`failed to set the sysctls of interface ${ifname} (${SYSCTLS_OPTION}): ${why}`);
  }
}
