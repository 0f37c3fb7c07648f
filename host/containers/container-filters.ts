/**
 * The `filters` of `GET /containers/json` (`docker ps --filter`), as Docker's daemon reads them
 * (moby daemon/list.go): every value is checked before any container is, in Docker's words, and
 * the result is one predicate over records. `network`, `volume`, `publish` and `expose` look at
 * what the list item shows (its Networks, Mounts and Ports), as Docker's do at its snapshot.
 */
import type { ContainerRecord, ContainerStore } from "../../core/containers/container-store.js";
import { ZERO_TIME } from "../../core/containers/container-store.js";
import type { ImageStore } from "../../core/images/image-store.js";
import { errors } from "../../core/errors.js";
import { filterMatches, labelsMatch } from "../api/filter-values.js";
import { checkFilterKeys } from "../api/query.js";
import { listItem } from "./container-view.js";

const CONTAINER_FILTER_KEYS = [
  "id", "name", "status", "label", "ancestor", "health",
  "before", "since", "exited", "network", "volume", "publish", "expose", "is-task", "isolation",
] as const;

/** Docker's values of the `status` filter: the states a container can be in. */
const STATUS_FILTER_VALUES = ["paused", "restarting", "removing", "running", "dead", "created", "exited"];

/** Docker's values of the `health` filter: a check's status, or `none` for a container without one. */
const HEALTH_FILTER_VALUES = ["starting", "healthy", "unhealthy", "none"];

interface ListItemView {
  Ports: { PrivatePort: number; PublicPort?: number; Type: string }[];
  NetworkSettings: { Networks: Record<string, { NetworkID?: string } | null> };
  Mounts: { Name?: string; Source?: string; Destination?: string }[];
}

/** A `status` filter lists stopped containers without `all` (Docker's daemon sets All for it). */
export const statusImpliesAll = (filters: Map<string, string[]>) => (filters.get("status") ?? []).length > 0;

/** Checks every filter's values (4xx when one is bad) and returns the test a container must pass. */
export function containerListFilter(filters: Map<string, string[]>, containers: ContainerStore, images: ImageStore): (c: ContainerRecord) => boolean {
  checkFilterKeys(filters, CONTAINER_FILTER_KEYS);
  const values = (key: string) => filters.get(key) ?? [];
  // daemon/list.go's invalidFilter, whose words (unlike an unknown key's) keep their capital
  for (const v of values("status")) {
    if (!STATUS_FILTER_VALUES.includes(v)) throw errors.apiInvalidBody(`Invalid filter 'status=${v}'`);
  }
  for (const v of values("health")) {
    if (!HEALTH_FILTER_VALUES.includes(v)) throw errors.apiInvalidBody(`Unrecognised filter value for health: ${v}`);
  }
  const createdOf = (ref: string) => Date.parse(byIdOrName(containers, ref).Created);
  const before = values("before").map(createdOf);
  const since = values("since").map(createdOf);
  const exited = values("exited").map(exitCode);
  const publish = portSet("publish", values("publish"));
  const expose = portSet("expose", values("expose"));
  const noTasks = isTaskWanted(values("is-task"));
  // `isolation` is a Windows notion: every Linux container has the default one (a create refuses
  // another), so Docker's daemon on Linux keeps every container for any value (list_unix.go)

  const any = (key: string, test: (v: string) => boolean) => !values(key).length || values(key).some(test);
  // the list item is made for the filters that look at it only (a list makes it again to answer)
  const byItem = publish.size > 0 || expose.size > 0 || values("network").length > 0 || values("volume").length > 0;
  if (filters.size === 0) return () => true;
  return (c) => {
    if (noTasks) return false;
    const created = Date.parse(c.Created);
    if (before.some((t) => created >= t) || since.some((t) => created <= t)) return false;
    if (exited.length && !(hasRun(c) && exited.includes(c.State.ExitCode))) return false;
    const item = (byItem ? listItem(c) : undefined) as unknown as ListItemView;
    if ((publish.size || expose.size) && !item.Ports.some((p) => publish.has(`${p.PublicPort ?? 0}/${p.Type}`) || expose.has(`${p.PrivatePort}/${p.Type}`))) return false;
    return (
      any("id", (v) => c.Id.startsWith(v)) &&
      any("name", (v) => filterMatches(v, c.Name, c.Name.slice(1))) &&
      any("status", (v) => c.State.Status === v) &&
      any("health", (v) => (c.State.Health?.Status ?? "none") === v) &&
      // every label filter must hold (Docker ANDs them), unlike the other keys, whose values are alternatives
      labelsMatch(c.Config.Labels, filters) &&
      any("ancestor", (v) => ancestorIs(images, v, c.Image)) &&
      any("network", (v) => onNetwork(item, v)) &&
      any("volume", (v) => item.Mounts.some((m) => m.Destination === v || (m.Name ? m.Name === v : m.Source === v)))
    );
  };
}

/**
 * `before`/`since` name a container by its full id or its name, not an id prefix, as Docker's do.
 * A missing one is a 404 (No such container), where dockerd 20.10 answered 500.
 */
function byIdOrName(containers: ContainerStore, ref: string): ContainerRecord {
  const name = `/${ref.replace(/^\//, "")}`;
  const found = containers.find(ref) ?? containers.list().find((c) => c.Name === name);
  if (!found) throw errors.containerNotFound(ref);
  return found;
}

/** An exit code is that of a run that ended: a container never started has none. */
const hasRun = (c: ContainerRecord) => !c.State.Running && c.State.StartedAt !== ZERO_TIME;

function ancestorIs(images: ImageStore, ref: string, imageId: string): boolean {
  try {
    return images.resolve(ref).id === imageId;
  } catch {
    return false;
  }
}

/** By the network's name, or a prefix of its id. */
function onNetwork(item: ListItemView, v: string): boolean {
  const nets = item.NetworkSettings.Networks;
  return v in nets || Object.values(nets).some((n) => !!n?.NetworkID && n.NetworkID.startsWith(v));
}

/** `exited=<int>`: Go's Atoi, with its message. */
function exitCode(v: string): number {
  if (!/^[+-]?\d+$/.test(v)) throw errors.apiInvalidBody(`strconv.Atoi: parsing ${JSON.stringify(v)}: invalid syntax`);
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw errors.apiInvalidBody(`strconv.Atoi: parsing ${JSON.stringify(v)}: value out of range`);
  return n;
}

/** `is-task`: Docker's containers can be swarm tasks, none here are; true wants those, false all. */
function isTaskWanted(vs: string[]): boolean {
  if (!vs.length || vs.includes("true")) return vs.includes("true");
  if (vs.includes("false")) return false;
  throw errors.apiInvalidBody(`Invalid filter 'is-task=[${vs.join(" ")}]'`);
}

/** `publish`/`expose` values, `<port>[/<proto>]` or `<start>-<end>[/<proto>]`, as `port/proto` keys. */
function portSet(key: string, vs: string[]): Set<string> {
  const out = new Set<string>();
  for (const v of vs) {
    if (v.includes(":")) throw errors.apiInvalidBody(`filter for '${key}' should not contain ':': ${v}`);
    const parts = v.split("/");
    const port = parts[0];
    const proto = parts.length > 1 && parts[1] ? parts[1] : "tcp";
    const bad = (why: string) => errors.apiInvalidBody(`error while looking up for ${key} ${v}: ${why}`);
    if (!port) throw bad("Empty string specified for ports.");
    const [start, end] = port.includes("-") ? port.split("-", 2).map((p) => uint16(p, bad)) : [uint16(port, bad), uint16(port, bad)];
    if (end < start) throw bad(`Invalid range specified for the Port: ${port}`);
    for (let p = start; p <= end; p++) out.add(`${p}/${proto}`);
  }
  return out;
}

/** Go's ParseUint(s, 10, 16), with its messages. */
function uint16(s: string, bad: (why: string) => Error): number {
  if (!/^\d+$/.test(s)) throw bad(`strconv.ParseUint: parsing ${JSON.stringify(s)}: invalid syntax`);
  if (Number(s) > 65535) throw bad(`strconv.ParseUint: parsing ${JSON.stringify(s)}: value out of range`);
  return Number(s);
}
