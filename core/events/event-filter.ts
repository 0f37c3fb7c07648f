/**
 * The `filters` of `GET /events`: `type`, `container`, `network`, `volume`, `plugin` and
 * `daemon` (the actor's ID or `name` is the value or begins with it, whatever the event's type,
 * as Docker's fuzzyMatchName: `c1` selects `c12` too), `image`, `event` (the action), `label`
 * (`k` or `k=v` among the actor's attributes), `scope`. Values of one key are alternatives; keys
 * must all hold; other keys are not looked at (Docker's daemon neither refuses nor uses them).
 */
import type { EngineEvent } from "./event.js";
import { familiarName, parseReference, repositoryOf } from "../images/reference.js";

export function eventMatches(e: EngineEvent, filters: ReadonlyMap<string, string[]>): boolean {
  const any = (key: string, test: (value: string) => boolean) => {
    const values = filters.get(key);
    return !values || values.length === 0 || values.some(test);
  };
  const attrs = e.Actor.Attributes;
  const actorIs = (value: string) => e.Actor.ID.startsWith(value) || (attrs.name ?? "").startsWith(value);
  return (
    any("type", (v) => e.Type === v) &&
    any("event", (v) => e.Action === v || e.Action.startsWith(`${v}: `)) &&
    any("scope", (v) => e.scope === v) &&
    any("container", actorIs) &&
    any("network", actorIs) &&
    any("volume", actorIs) &&
    any("plugin", actorIs) &&
    any("daemon", actorIs) &&
    any("image", (v) => imageMatches(e, v)) &&
    any("label", (v) => {
      const eq = v.indexOf("=");
      return eq < 0 ? v in attrs : attrs[v.slice(0, eq)] === v.slice(eq + 1);
    })
  );
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
