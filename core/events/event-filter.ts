/**
 * The `filters` of `GET /events`: `type`, `container` (id, id prefix of 12 or more, or name),
 * `image`, `event` (the action), `label` (`k` or `k=v` among the actor's attributes),
 * `network`, `daemon`. Values of one key are alternatives; keys must all hold.
 */
import type { EngineEvent } from "./event.js";

export const EVENT_FILTER_KEYS = ["type", "container", "image", "event", "label", "network", "daemon", "volume", "plugin", "scope"] as const;

export function eventMatches(e: EngineEvent, filters: ReadonlyMap<string, string[]>): boolean {
  const any = (key: string, test: (value: string) => boolean) => {
    const values = filters.get(key);
    return !values || values.length === 0 || values.some(test);
  };
  const attrs = e.Actor.Attributes;
  const actorIs = (type: string) => (value: string) => e.Type === type && (e.Actor.ID === value || (value.length >= 12 && e.Actor.ID.startsWith(value)) || attrs.name === value);
  return (
    any("type", (v) => e.Type === v) &&
    any("event", (v) => e.Action === v || e.Action.startsWith(`${v}: `)) &&
    any("scope", (v) => e.scope === v) &&
    any("container", actorIs("container")) &&
    any("network", actorIs("network")) &&
    any("volume", actorIs("volume")) &&
    any("plugin", actorIs("plugin")) &&
    any("daemon", actorIs("daemon")) &&
    any("image", (v) => imageMatches(e, v)) &&
    any("label", (v) => {
      const eq = v.indexOf("=");
      return eq < 0 ? v in attrs : attrs[v.slice(0, eq)] === v.slice(eq + 1);
    })
  );
}

/** An image filter matches image events by id or name, and container events by their image. */
function imageMatches(e: EngineEvent, value: string): boolean {
  const strip = (ref: string) => ref.replace(/:latest$/, "");
  if (e.Type === "image") return e.Actor.ID === value || strip(e.Actor.Attributes.name ?? "") === strip(value) || e.Actor.ID === `sha256:${value}`;
  if (e.Type === "container") return strip(e.Actor.Attributes.image ?? "") === strip(value);
  return false;
}
