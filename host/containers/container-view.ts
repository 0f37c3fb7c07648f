/**
 * How containers look through the API: the list item of `GET /containers/json` with Docker's
 * human status ("Up 3 seconds", "Exited (0) 5 minutes ago"), and the `inspect` document.
 */
import { dirname, join } from "node:path";
import { ZERO_TIME, type ContainerEndpoint, type ContainerRecord, type NetworkAttachment } from "../../core/containers/container-store.js";
import { humanDuration } from "../../core/go-units.js";
import { networkDisabled } from "../../core/containers/network-disabled.js";
import { mountView } from "../volumes/volume-view.js";
import { containerConfigView } from "./config-view.js";
import { hostConfigView } from "./host-config-view.js";

/**
 * `{ port/proto: [{HostIp, HostPort}] | null }`: published ports, and exposed ones (null) of a
 * running container; none for one on the host's, none or another container's network, which has
 * no endpoint of its own to publish on (Docker's port map comes from the endpoints).
 */
function portMap(c: ContainerRecord): Record<string, { HostIp: string; HostPort: string }[] | null> {
  const out: Record<string, { HostIp: string; HostPort: string }[] | null> = {};
  if (!c.State.Running || networkDisabled(c) || !c.Endpoints?.length) return out;
  for (const k of Object.keys(c.Config.ExposedPorts ?? {})) out[k.includes("/") ? k : `${k}/tcp`] = null;
  for (const ep of c.Endpoints ?? []) {
    for (const p of ep.published ?? []) {
      const key = `${p.containerPort}/${p.proto}`;
      (out[key] ??= []).push({ HostIp: p.hostIp, HostPort: String(p.hostPort) });
    }
  }
  return out;
}

/** `Ports` of the list: one item per published binding, and per exposed port without one. */
function portList(c: ContainerRecord): Record<string, unknown>[] {
  const items: Record<string, unknown>[] = [];
  for (const [key, bindings] of Object.entries(portMap(c))) {
    const [port, type] = key.split("/");
    if (!bindings) items.push({ PrivatePort: Number(port), Type: type });
    else for (const b of bindings) items.push({ IP: b.HostIp, PrivatePort: Number(port), PublicPort: Number(b.HostPort), Type: type });
  }
  return items;
}

const prefixOf = (cidr: string | undefined) => (cidr ? Number(cidr.split("/")[1]) : 0);
const addressOf = (cidr: string | undefined) => (cidr ? cidr.split("/")[0] : "");

/** One entry of `NetworkSettings.Networks`, in Docker's shape: what was asked, and what the run got. */
/**
 * `beforeStart`: the container never ran, so the MAC it asked for (EndpointSettings.MacAddress)
 * is still what Docker shows; once it has run, only a running endpoint's MAC shows.
 */
function endpointSettings(att: NetworkAttachment, ep: ContainerEndpoint | undefined, beforeStart = false): Record<string, unknown> {
  return {
    IPAMConfig: att.IPAMConfig ?? null,
    Links: att.Links?.length ? att.Links : null,
    Aliases: att.Aliases?.length ? att.Aliases : null,
    MacAddress: ep?.mac ?? (beforeStart ? att.MacAddress : undefined) ?? "",
    DriverOpts: att.DriverOpts ?? null,
    GwPriority: att.GwPriority ?? 0,
    NetworkID: att.NetworkID,
    EndpointID: ep?.endpointId ?? "",
    Gateway: ep?.gateway4 ?? "",
    IPAddress: addressOf(ep?.ipv4),
    IPPrefixLen: prefixOf(ep?.ipv4),
    IPv6Gateway: ep?.gateway6 ?? "",
    GlobalIPv6Address: addressOf(ep?.ipv6),
    GlobalIPv6PrefixLen: prefixOf(ep?.ipv6),
    DNSNames: ep?.dnsNames?.length ? ep.dnsNames : null,
  };
}

function networks(c: ContainerRecord): Record<string, Record<string, unknown>> {
  const running = c.State.Running ? c.Endpoints ?? [] : [];
  const beforeStart = c.State.StartedAt === ZERO_TIME;
  if (c.Networks) {
    return Object.fromEntries(Object.entries(c.Networks).map(([name, att]) => [name, endpointSettings(att, running.find((ep) => ep.networkId === att.NetworkID), beforeStart)]));
  }
  if (networkDisabled(c)) return {};
  // a record from before `Networks` was kept: its endpoints, or its mode with nothing in it
  const mode = c.HostConfig.NetworkMode ?? "none";
  if (c.Endpoints?.length) return Object.fromEntries(c.Endpoints.map((ep) => [ep.networkName, endpointSettings({ NetworkID: ep.networkId }, running.includes(ep) ? ep : undefined)]));
  return mode === "none" || mode === "host" ? { [mode]: endpointSettings({ NetworkID: "" }, undefined) } : {};
}

function statusText(c: ContainerRecord, now = Date.now()): string {
  switch (c.State.Status) {
    case "created":
      return "Created";
    case "running": {
      // with a health check: `(health: starting)`, `(healthy)`, `(unhealthy)`, as Docker's State.String()
      const health = c.State.Health ? ` (${c.State.Health.Status === "starting" ? "health: starting" : c.State.Health.Status})` : "";
      return `Up ${humanDuration(now - Date.parse(c.State.StartedAt))}${health}`;
    }
    case "paused":
      return `Up ${humanDuration(now - Date.parse(c.State.StartedAt))} (Paused)`;
    case "restarting":
      return `Restarting (${c.State.ExitCode}) ${humanDuration(now - Date.parse(c.State.FinishedAt))} ago`;
    case "exited":
      return `Exited (${c.State.ExitCode}) ${humanDuration(now - Date.parse(c.State.FinishedAt))} ago`;
    default:
      return c.State.Status;
  }
}

/**
 * `linkNames`: the names the container has as others' link (`/web/db`); Docker lists every name
 * in order. `imageNamed`: what image a name names now; as Docker, the list shows the name the
 * container was made from while it still names its image, else the image's ID.
 */
export function listItem(c: ContainerRecord, linkNames: readonly string[] = [], imageNamed?: (name: string) => string | undefined): Record<string, unknown> {
  return {
    Id: c.Id,
    Names: linkNames.length ? [c.Name, ...linkNames].sort() : [c.Name],
    Image: !imageNamed || c.Config.Image === c.Image || imageNamed(c.Config.Image) === c.Image ? c.Config.Image : c.Image,
    ImageID: c.Image,
    // Docker's: an argument with a space in single quotes, as is (no escaping); the path never
    Command: [c.Path, ...c.Args.map((a) => (a.includes(" ") ? `'${a}'` : a))].join(" "),
    Created: Math.floor(Date.parse(c.Created) / 1000),
    Ports: portList(c),
    Labels: c.Config.Labels ?? {},
    State: c.State.Status,
    Status: statusText(c),
    // its annotations beside the mode (Docker's list from API 1.46; older clients ignore them)
    HostConfig: {
      NetworkMode: c.HostConfig.NetworkMode ?? "none",
      ...(c.HostConfig.Annotations && Object.keys(c.HostConfig.Annotations).length ? { Annotations: c.HostConfig.Annotations } : {}),
    },
    NetworkSettings: { Networks: networks(c) },
    Mounts: (c.Mounts ?? []).map(mountView),
  };
}

/**
 * `links`: HostConfig.Links as Docker shows them, resolved (`/db:/web/db`), or null; `execIds`:
 * the container's exec instances that have not exited, or null.
 */
export function inspectDocument(c: ContainerRecord, links: string[] | null = null, execIds: string[] | null = null): Record<string, unknown> {
  return {
    Id: c.Id,
    Created: c.Created,
    Path: c.Path,
    Args: c.Args,
    State: c.State,
    Image: c.Image,
    // (a container without a network has its image's hosts and resolv.conf: no paths of ours)
    ResolvConfPath: networkDisabled(c) ? "" : join(dirname(c.LogPath), "resolv.conf"),
    HostnamePath: join(dirname(c.LogPath), "hostname"),
    HostsPath: networkDisabled(c) ? "" : join(dirname(c.LogPath), "hosts"),
    LogPath: c.LogPath,
    Name: c.Name,
    RestartCount: c.RestartCount ?? 0,
    Driver: c.Driver,
    Platform: "linux",
    MountLabel: "",
    ProcessLabel: "",
    AppArmorProfile: "",
    ExecIDs: execIds,
    HostConfig: hostConfigView(c.HostConfig, { Links: links }),
    GraphDriver: { Name: c.Driver, Data: null },
    Mounts: (c.Mounts ?? []).map(mountView),
    Config: containerConfigView(c.Config),
    NetworkSettings: networkSettings(c),
  };
}

/** Inspect's NetworkSettings: the default network's fields at the top as well, as Docker keeps them. */
function networkSettings(c: ContainerRecord): Record<string, unknown> {
  const running = c.State.Running && !!c.Endpoints?.length;
  const def = running ? c.Endpoints?.find((ep) => ep.networkName === "bridge") : undefined;
  return {
    Bridge: "",
    SandboxID: running ? c.Id : "",
    SandboxKey: running ? (def ?? c.Endpoints?.[0])?.sandbox ?? "" : "",
    HairpinMode: false,
    LinkLocalIPv6Address: "",
    LinkLocalIPv6PrefixLen: 0,
    Ports: portMap(c),
    SecondaryIPAddresses: null,
    SecondaryIPv6Addresses: null,
    EndpointID: def?.endpointId ?? "",
    Gateway: def?.gateway4 ?? "",
    GlobalIPv6Address: addressOf(def?.ipv6),
    GlobalIPv6PrefixLen: prefixOf(def?.ipv6),
    IPAddress: addressOf(def?.ipv4),
    IPPrefixLen: prefixOf(def?.ipv4),
    IPv6Gateway: def?.gateway6 ?? "",
    MacAddress: def?.endpointId ? def.mac : "",
    Networks: networks(c),
  };
}
