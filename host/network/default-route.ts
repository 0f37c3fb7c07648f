/**
 * Which of a running container's networks gives its default route, and moving the route there
 * when a connect or a disconnect changes the answer, as Docker 28 does at once (API 1.48's
 * GwPriority). Docker's order of a sandbox's endpoints decides, per IP family among those whose
 * network has a gateway of that family and is not internal: the highest GwPriority, then an
 * endpoint with gateways of both families before one with a single one, then the network whose
 * name sorts first. The route itself is the sandbox's, not a driver's: it is replaced in the
 * container's namespace (`ip route replace`), so no packet is sent without one in between.
 * Published ports go with the gateway (`portsEndpoint`).
 */
import { execFileAsync } from "../../core/exec-file.js";
import type { ContainerEndpoint } from "../../core/containers/container-store.js";

export interface RouteCandidate {
  ep: ContainerEndpoint;
  priority: number;
  /** Its network is internal: no way out, no default route. */
  internal: boolean;
}

type Family = 4 | 6;

async function ipIn(sandbox: string, args: string[]): Promise<string> {
  return (await execFileAsync("nsenter", [`--net=${sandbox}`, "--", "ip", ...args], { timeout: 10_000 })).stdout;
}

/** The interface the default route of a family leaves by now, if there is one. */
async function currentDevice(sandbox: string, family: Family): Promise<string | undefined> {
  const routes = JSON.parse((await ipIn(sandbox, ["-j", `-${family}`, "route", "show", "default"])) || "[]") as { dev?: string }[];
  return routes[0]?.dev;
}

function gatewayOf(ep: ContainerEndpoint, family: Family): string | undefined {
  return (family === 4 ? ep.gateway4 : ep.gateway6) || undefined;
}

/** Docker's ordering of the endpoints that may be a gateway: the best first. */
function byGatewayOrder(a: RouteCandidate, b: RouteCandidate): number {
  const both = (c: RouteCandidate) => (c.ep.gateway4 ? 1 : 0) + (c.ep.gateway6 ? 2 : 0);
  return b.priority - a.priority || both(b) - both(a) || (a.ep.networkName < b.ep.networkName ? -1 : a.ep.networkName > b.ep.networkName ? 1 : 0);
}

/** The endpoint that should give the default route of a family. */
function gatewayEndpoint(candidates: readonly RouteCandidate[], family: Family): ContainerEndpoint | undefined {
  return candidates.filter((c) => !c.internal && gatewayOf(c.ep, family)).sort(byGatewayOrder)[0]?.ep;
}

/**
 * The endpoint that should hold the container's published ports: its IPv4 gateway, else its
 * IPv6 one; none when no network of it leads out (Docker publishes ports on the gateway).
 */
export function portsEndpoint(candidates: readonly RouteCandidate[]): ContainerEndpoint | undefined {
  return gatewayEndpoint(candidates, 4) ?? gatewayEndpoint(candidates, 6);
}

/** Moves the sandbox's default routes (IPv4 and IPv6) to the endpoints that should give them. */
export async function moveDefaultRoutes(sandbox: string, candidates: readonly RouteCandidate[]): Promise<void> {
  for (const family of [4, 6] as const) {
    const current = await currentDevice(sandbox, family);
    const best = gatewayEndpoint(candidates, family);
    if (!best) {
      if (current) await ipIn(sandbox, [`-${family}`, "route", "del", "default"]);
      continue;
    }
    if (best.ifname === current) continue;
    await ipIn(sandbox, [`-${family}`, "route", "replace", "default", "via", gatewayOf(best, family)!, "dev", best.ifname]);
  }
}
