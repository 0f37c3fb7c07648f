/**
 * The `filters` of `GET /events`: `type`, `container` (id, id prefix of 12 or more, or name),
 * `image`, `event` (the action), `label` (`k` or `k=v` among the actor's attributes),
 * `network`, `daemon`, `volume`, `plugin`, `scope`. Values of one key are alternatives; keys must
 * all hold; other keys are not looked at (Docker's daemon neither refuses nor uses them).
 */
import type { EngineEvent } from "./event.js";
import { familiarName, parseReference, repositoryOf } from "../images/reference.js";

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
    any("network", (v) => networkMatches(e, v)) &&
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

/**
 * A network filter, as Docker's: the actor's ID or `name` is the value or starts with it (so
 * `bridge`, an ID prefix and a network's name all select that network's events).
 */
function networkMatches(e: EngineEvent, value: string): boolean {
  const name = e.Actor.Attributes.name ?? "";
  return e.Type === "network" && (e.Actor.ID.startsWith(value) || name.startsWith(value));
}

/**
 * An image filter, as Docker's: exactly the actor's ID or its image name (`name` on image
 * events, `image` on the others), or either without its tag or digest (`busybox` selects
 * `busybox:1.36` too). The bare hex of an ID selects it as well.
 */
function imageMatches(e: EngineEvent, value: string): boolean {
  const name = (e.Type === "image" ? e.Actor.Attributes.name : e.Actor.Attributes.image) ?? "";
  const candidates = [e.Actor.ID, name, repositoryName(e.Actor.ID), repositoryName(name)];
  return candidates.includes(value) || e.Actor.ID === `sha256:${value}`;
}

/** `busybox:1.36` -> `busybox`; an image ID or something that is no reference stays as it is. */
function repositoryName(text: string): string {
  if (text === "" || /^sha256:[a-f0-9]{64}$/.test(text)) return text;
  try {
    return familiarName(repositoryOf(parseReference(text, null)));
  } catch {
    return text;
  }
}
