/**
 * A container of the list (`GET /containers/json`) as `--format` templates see it in the Docker
 * CLI (its ContainerContext): .ID, .Image, .Command, .CreatedAt, .RunningFor, .Ports, .State,
 * .Status, .Size, .Names, .Labels, .Label "k", .Mounts, .LocalVolumes, .Networks, .Platform.
 */
import { goTimeString, since } from "./human.js";
import { ellipsis, goQuote, truncateId } from "./render.js";
import { struct, type GoStruct } from "./template.js";
import { humanSize } from "../../core/go-units.js";

export interface PortSummary {
  IP?: string;
  PrivatePort: number;
  PublicPort?: number;
  Type: string;
}

export interface ContainerSummary {
  Id: string;
  Names?: string[];
  Image?: string;
  ImageID?: string;
  Command?: string;
  Created?: number;
  Ports?: PortSummary[];
  SizeRw?: number;
  SizeRootFs?: number;
  Labels?: Record<string, string> | null;
  State?: string;
  Status?: string;
  Mounts?: { Name?: string; Source?: string; Driver?: string }[];
  NetworkSettings?: { Networks?: Record<string, unknown> } | null;
  ImageManifestDescriptor?: { platform?: unknown } | null;
}

export const CONTAINER_HEADERS: Record<string, string> = {
  ID: "CONTAINER ID",
  Names: "NAMES",
  Image: "IMAGE",
  Command: "COMMAND",
  CreatedAt: "CREATED AT",
  RunningFor: "CREATED",
  Ports: "PORTS",
  State: "STATE",
  Status: "STATUS",
  Size: "SIZE",
  Labels: "LABELS",
  Mounts: "MOUNTS",
  LocalVolumes: "LOCAL VOLUMES",
  Networks: "NETWORKS",
  Platform: "PLATFORM",
};

export const CONTAINER_TYPE = "*formatter.ContainerContext";

/** A reference in its short ("familiar") form: docker.io/library/ and a digest dropped. */
function familiarImage(ref: string): string {
  let name = ref;
  const at = name.indexOf("@");
  if (at >= 0) name = name.slice(0, at);
  if (name.startsWith("docker.io/library/")) name = name.slice("docker.io/library/".length);
  else if (name.startsWith("index.docker.io/library/")) name = name.slice("index.docker.io/library/".length);
  else if (name.startsWith("docker.io/")) name = name.slice("docker.io/".length);
  return name;
}

/** `trunc` is the default (no --no-trunc); `onSize` learns when a template asks for .Size. */
export function containerContext(c: ContainerSummary, trunc: boolean, onSize?: () => void): GoStruct {
  return struct(CONTAINER_TYPE, containerFields(c, trunc, onSize));
}

/** The fields of containerContext, each a function of the container (`.Label` takes a name). */
export function containerFields(c: ContainerSummary, trunc: boolean, onSize?: () => void) {
  return {
    ID: () => (trunc ? truncateId(c.Id ?? "") : (c.Id ?? "")),
    Names: () => {
      const names = (c.Names ?? []).map((n) => n.replace(/^\//, ""));
      // truncated, a container shows one name: the first that is not a legacy link ("a/b")
      if (trunc) return names.find((n) => !n.includes("/")) ?? "";
      return names.join(",");
    },
    Image: () => {
      const image = c.Image ?? "";
      if (image === "") return "<no image>";
      if (!trunc) return image;
      const short = truncateId(c.ImageID ?? "");
      if (short === truncateId(image)) return short;
      return familiarImage(image);
    },
    Command: () => goQuote(trunc ? ellipsis(c.Command ?? "", 20) : (c.Command ?? "")),
    CreatedAt: () => goTimeString(c.Created ?? 0),
    RunningFor: () => since(c.Created ?? 0),
    Platform: () => c.ImageManifestDescriptor?.platform ?? null,
    Ports: () => displayablePorts(c.Ports ?? []),
    State: () => c.State ?? "",
    Status: () => c.Status ?? "",
    Size: () => {
      onSize?.();
      const rw = humanSize(c.SizeRw ?? 0, 3);
      return (c.SizeRootFs ?? 0) > 0 ? `${rw} (virtual ${humanSize(c.SizeRootFs!, 3)})` : rw;
    },
    Labels: () =>
      Object.entries(c.Labels ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .sort()
        .join(","),
    Label: (name: string) => c.Labels?.[name] ?? "",
    Mounts: () => (c.Mounts ?? []).map((m) => (trunc ? ellipsis(m.Name || m.Source || "", 15) : m.Name || m.Source || "")).join(","),
    LocalVolumes: () => String((c.Mounts ?? []).filter((m) => m.Driver === "local").length),
    Networks: () => Object.keys(c.NetworkSettings?.Networks ?? {}).join(","),
  };
}

const joinHostPort = (ip: string, port: number | string) => (ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`);

/** The PORTS column: "0.0.0.0:8080->80/tcp, [::]:8080->80/tcp, 9000-9002/udp", ranges merged. */
function displayablePorts(input: readonly PortSummary[]): string {
  const ports = [...input].sort(
    (a, b) =>
      a.PrivatePort - b.PrivatePort || ((a.IP ?? "") < (b.IP ?? "") ? -1 : (a.IP ?? "") > (b.IP ?? "") ? 1 : 0) || (a.PublicPort ?? 0) - (b.PublicPort ?? 0) || (a.Type < b.Type ? -1 : a.Type > b.Type ? 1 : 0),
  );
  const groups = new Map<string, { first: number; last: number }>();
  const result: string[] = [];
  const hostMappings: string[] = [];
  const formGroup = (key: string, first: number, last: number) => {
    const slash = key.lastIndexOf("/");
    const ip = slash >= 0 ? key.slice(0, slash) : "";
    const type = slash >= 0 ? key.slice(slash + 1) : key;
    let group = first === last ? String(first) : `${first}-${last}`;
    if (ip) group = `${joinHostPort(ip, group)}->${group}`;
    return `${group}/${type}`;
  };
  for (const p of ports) {
    let key = p.Type;
    if (p.IP) {
      if ((p.PublicPort ?? 0) !== p.PrivatePort) {
        hostMappings.push(`${joinHostPort(p.IP, p.PublicPort ?? 0)}->${p.PrivatePort}/${p.Type}`);
        continue;
      }
      key = `${p.IP}/${p.Type}`;
    }
    const g = groups.get(key);
    if (!g) {
      groups.set(key, { first: p.PrivatePort, last: p.PrivatePort });
      continue;
    }
    if (p.PrivatePort === g.last + 1) {
      g.last = p.PrivatePort;
      continue;
    }
    result.push(formGroup(key, g.first, g.last));
    groups.set(key, { first: p.PrivatePort, last: p.PrivatePort });
  }
  for (const [key, g] of groups) result.push(formGroup(key, g.first, g.last));
  return [...result, ...hostMappings].join(", ");
}
