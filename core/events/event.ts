/**
 * Events: what happened to containers, images, networks and the daemon, in the shape of
 * Docker's `GET /events` (`Type`, `Action`, `Actor {ID, Attributes}`, `scope`, `time`,
 * `timeNano`, and for containers and images the older `status`, `id`, `from`).
 *
 * `timeNano` is a 64-bit count of nanoseconds, past what a JavaScript number holds exactly; it
 * is kept as a bigint and written into the JSON by `eventJson`. Within one daemon it only
 * grows, so that `since` and `until` cut the history at an exact event.
 */

export type EventType = "container" | "image" | "network" | "volume" | "daemon" | "plugin" | "builder";

export interface EngineEvent {
  Type: EventType;
  Action: string;
  Actor: { ID: string; Attributes: Record<string, string> };
  scope: "local";
  /** Unix seconds. */
  time: number;
  timeNano: bigint;
}

let lastNano = 0n;

/** Now in nanoseconds, strictly after the previous event's. */
function nextNano(): bigint {
  const now = BigInt(Date.now()) * 1_000_000n;
  lastNano = now > lastNano ? now : lastNano + 1n;
  return lastNano;
}

export function makeEvent(type: EventType, action: string, id: string, attributes: Record<string, string> = {}): EngineEvent {
  const timeNano = nextNano();
  return { Type: type, Action: action, Actor: { ID: id, Attributes: attributes }, scope: "local", time: Number(timeNano / 1_000_000_000n), timeNano };
}

/**
 * The event as one line of JSON, `timeNano` exact. Container events carry `status`, `id` and
 * `from` (the image, left out when none), image events `status` and `id`: fields of API 1.21
 * that Docker kept in every answer up to API 1.51 (its clients up to Docker 25 read them).
 */
export function eventJson(e: EngineEvent): string {
  const image = e.Actor.Attributes.image;
  const legacy =
    e.Type === "container" ? { status: e.Action, id: e.Actor.ID, ...(image ? { from: image } : {}) } : e.Type === "image" ? { status: e.Action, id: e.Actor.ID } : {};
  const body = JSON.stringify({ ...legacy, Type: e.Type, Action: e.Action, Actor: e.Actor, scope: e.scope, time: e.time, timeNano: 0 });
  return body.replace(/"timeNano":0}$/, `"timeNano":${e.timeNano}}`);
}

/** `1700000000.5` (seconds, a fraction of up to nine digits) as nanoseconds; undefined when not one. */
export function parseEventTime(raw: string): bigint | undefined {
  const m = /^(\d+)(?:\.(\d{1,9}))?$/.exec(raw);
  if (!m) return undefined;
  return BigInt(m[1]) * 1_000_000_000n + BigInt((m[2] ?? "").padEnd(9, "0"));
}
