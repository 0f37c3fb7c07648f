/**
 * The names of a container's interfaces: `com.docker.network.endpoint.ifname` in an endpoint's
 * DriverOpts (Docker 28.0+, at create and at connect) names its interface; the others get `ethN`,
 * N the lowest number no interface of the sandbox has, as Docker's generated names (so `eth2`
 * asked for one network leaves eth0, eth1, eth3... to the others).
 *
 * Docker renames the interface whatever the name, and a name the kernel refuses or one the
 * sandbox has already (another endpoint's, `lo`) fails the start or the connect with the
 * kernel's "error renaming interface ...: file exists", after its networks were joined in an
 * order it does not promise. Here the names a container asks for are known before any join:
 * generated names never take one of them, and a clash or a name the kernel would refuse is the
 * client's error (400), in Docker's words, before anything is made.
 */
import { errors } from "../../core/errors.js";
import type { ContainerEndpoint, NetworkAttachment } from "../../core/containers/container-store.js";

export const IFNAME_OPTION = "com.docker.network.endpoint.ifname";

/** The interface name an attachment asks for, if it asks. */
export function askedIfname(att: NetworkAttachment): string | undefined {
  const v = att.DriverOpts?.[IFNAME_OPTION];
  return v ? v : undefined;
}

/**
 * The kernel's rule for a link name (dev_valid_name): 1 to 15 bytes, not `.` or `..`, without
 * `/`, `:` or white space.
 */
function validIfname(name: string): boolean {
  return Buffer.byteLength(name) <= 15 && name !== "." && name !== ".." && !/[/:\s]/.test(name);
}

/** A sandbox's loopback, which no endpoint may be named after. */
const LOOPBACK = "lo";

/**
 * Checks the names a container's attachments ask for, before its start joins any: each one the
 * kernel takes, none twice, none `lo`.
 */
export function checkAskedIfnames(attachments: readonly [string, NetworkAttachment][]): void {
  const seen = new Map<string, string>();
  for (const [network, att] of attachments) {
    const name = askedIfname(att);
    if (name === undefined) continue;
    checkOne(name, network, seen.get(name) ?? (name === LOOPBACK ? LOOPBACK : undefined));
    seen.set(name, `network ${network}`);
  }
}

/** For a connect of a running container: the name asked is free in its sandbox. */
export function checkIfnameFree(name: string, network: string, endpoints: readonly ContainerEndpoint[]): void {
  const holder = endpoints.find((e) => e.ifname === name);
  checkOne(name, network, holder ? `network ${holder.networkName}` : name === LOOPBACK ? LOOPBACK : undefined);
}

function checkOne(name: string, network: string, holder: string | undefined): void {
  if (!validIfname(name)) throw errors.networkInvalid(`error renaming interface to "${name}" (${IFNAME_OPTION} of network ${network}): invalid argument: an interface name has 1 to 15 characters, none of them '/', ':' or white space`);
  if (holder) throw errors.networkInvalid(`error renaming interface to "${name}" (${IFNAME_OPTION} of network ${network}): file exists: the container's interface on ${holder === LOOPBACK ? "loopback" : holder} has that name`);
}

/** The name of a new interface: the one asked, else the lowest `ethN` neither used nor asked for. */
export function interfaceName(att: NetworkAttachment, used: readonly ContainerEndpoint[], reserved: ReadonlySet<string>): string {
  const asked = askedIfname(att);
  if (asked) return asked;
  const taken = new Set([...used.map((e) => e.ifname), ...reserved]);
  // bounded: at most one step per name taken
  let i = 0;
  while (taken.has(`eth${i}`)) i++;
  return `eth${i}`;
}
