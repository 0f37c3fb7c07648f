/**
 * How containers look through the API: the list item of `GET /containers/json` with Docker's
 * human status ("Up 3 seconds", "Exited (0) 5 minutes ago"), and the `inspect` document.
 */
import type { ContainerRecord } from "../../core/containers/container-store.js";

/** Go's units.HumanDuration, which the Docker CLI and API use in statuses. */
export function humanDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 1) return "Less than a second";
  if (s === 1) return "1 second";
  if (s < 60) return `${s} seconds`;
  const m = Math.round(s / 60);
  if (m === 1) return "About a minute";
  if (m < 60) return `${m} minutes`;
  const h = Math.round(s / 3600);
  if (h === 1) return "About an hour";
  if (h < 48) return `${h} hours`;
  if (h < 24 * 7 * 2) return `${Math.round(h / 24)} days`;
  if (h < 24 * 30 * 2) return `${Math.round(h / 24 / 7)} weeks`;
  if (h < 24 * 365 * 2) return `${Math.round(h / 24 / 30)} months`;
  return `${Math.round(h / 24 / 365)} years`;
}

export function statusText(c: ContainerRecord, now = Date.now()): string {
  switch (c.State.Status) {
    case "created":
      return "Created";
    case "running":
      return `Up ${humanDuration(now - Date.parse(c.State.StartedAt))}`;
    case "exited":
      return `Exited (${c.State.ExitCode}) ${humanDuration(now - Date.parse(c.State.FinishedAt))} ago`;
    default:
      return c.State.Status;
  }
}

export function listItem(c: ContainerRecord): Record<string, unknown> {
  return {
    Id: c.Id,
    Names: [c.Name],
    Image: c.Config.Image,
    ImageID: c.Image,
    Command: [c.Path, ...c.Args].map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(" "),
    Created: Math.floor(Date.parse(c.Created) / 1000),
    Ports: [],
    Labels: c.Config.Labels ?? {},
    State: c.State.Status,
    Status: statusText(c),
    HostConfig: { NetworkMode: c.HostConfig.NetworkMode ?? "none" },
    NetworkSettings: { Networks: {} },
    Mounts: [],
  };
}

export function inspectDocument(c: ContainerRecord): Record<string, unknown> {
  return {
    Id: c.Id,
    Created: c.Created,
    Path: c.Path,
    Args: c.Args,
    State: c.State,
    Image: c.Image,
    ResolvConfPath: "",
    HostnamePath: "",
    HostsPath: "",
    LogPath: c.LogPath,
    Name: c.Name,
    RestartCount: 0,
    Driver: c.Driver,
    Platform: "linux",
    MountLabel: "",
    ProcessLabel: "",
    AppArmorProfile: "",
    ExecIDs: null,
    HostConfig: c.HostConfig,
    GraphDriver: { Name: c.Driver, Data: null },
    Mounts: [],
    Config: c.Config,
    NetworkSettings: { Bridge: "", SandboxID: "", Ports: {}, Networks: {} },
  };
}
