/**
 * Which of a running container's networks gives its default route, and moving the route there
 * when a connect or a disconnect changes the answer, as Docker 28 does at once (API 1.48's
 * GwPriority): per IP family, the endpoint of the highest GwPriority among those whose network
 * has a gateway of that family and is not internal; of equal priorities the one that has the
 * route keeps it, else the network whose name sorts first (Docker's order of a sandbox's
 * endpoints). The route itself is the sandbox's, not a driver's: it is replaced in the
 * container's namespace (`ip route replace`), so no packet is sent without one in between.
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

/** The endpoint that should give the default route of a family, given the one that gives it now. */
function gatewayEndpoint(candidates: readonly RouteCandidate[], family: Family, currentIfname: string | undefined): ContainerEndpoint | undefined {
  const able = candidates.filter((c) => !c.internal && gatewayOf(c.ep, family));
  const sorted = [...able].sort(
    (a, b) =>
      b.priority - a.priority ||
      Number(b.ep.ifname === currentIfname) - Number(a.ep.ifname === currentIfname) ||
      (a.ep.networkName < b.ep.networkName ? -1 : a.ep.networkName > b.ep.networkName ? 1 : 0),
  );
  return sorted[0]?.ep;
}

/** Moves the sandbox's default routes (IPv4 and IPv6) to the endpoints that should give them. */
export async function moveDefaultRoutes(sandbox: string, candidates: readonly RouteCandidate[]): Promise<void> {
  for (const family of [4, 6] as const) {
    const current = await currentDevice(sandbox, family);
    const best = gatewayEndpoint(candidates, family, current);
    if (!best) {
      if (current) await ipIn(sandbox, [`-${family}`, "route", "del", "default"]);
      continue;
    }
    if (best.ifname === current) continue;
    await ipIn(sandbox, [`-${family}`, "route", "replace", "default", "via", gatewayOf(best, family)!, "dev", best.ifname]);
  }
}
