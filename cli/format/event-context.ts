/**
 * An event of `GET /events` as `docker events` shows it: a line with the time (RFC 3339, nine
 * fraction digits, local zone), type, action, actor and its attributes sorted; or, through
 * `--format`, the Go struct `events.Message` (.Status .ID .From .Type .Action .Actor.ID
 * .Actor.Attributes .Scope .Time .TimeNano), whose `{{json .}}` is the API's JSON.
 */
import { GoMap, plainStruct, type GoStruct } from "./template.js";

export interface EventMessage {
  status?: string;
  id?: string;
  from?: string;
  Type?: string;
  Action?: string;
  Actor?: { ID?: string; Attributes?: Record<string, string> | null };
  scope?: string;
  time?: number;
}

const EVENT_TYPE = "*events.Message";

/**
 * `timeNano` exceeds 2^53: JSON.parse would round it, so it is read from the line's text.
 * `raw` is the event's JSON line.
 */
export function timeNanoOf(raw: string): bigint {
  const m = /"timeNano"\s*:\s*(-?\d+)/.exec(raw);
  return m ? BigInt(m[1]) : 0n;
}

export function eventContext(e: EventMessage, timeNano: bigint): GoStruct {
  const attributes = e.Actor?.Attributes ?? null;
  return plainStruct(EVENT_TYPE, {
    Status: e.status ?? "",
    ID: e.id ?? "",
    From: e.from ?? "",
    Type: e.Type ?? "",
    Action: e.Action ?? "",
    Actor: plainStruct("events.Actor", {
      ID: e.Actor?.ID ?? "",
      Attributes: new GoMap(attributes ?? {}),
      toJSON: () => ({ ID: e.Actor?.ID ?? "", Attributes: attributes === null ? null : new GoMap(attributes) }),
    }),
    Scope: e.scope ?? "",
    Time: e.time ?? 0,
    TimeNano: timeNano,
    // the struct's JSON: Go's field order, status/id/from left out when empty
    toJSON: () => ({
      ...(e.status ? { status: e.status } : {}),
      ...(e.id ? { id: e.id } : {}),
      ...(e.from ? { from: e.from } : {}),
      Type: e.Type ?? "",
      Action: e.Action ?? "",
      Actor: { ID: e.Actor?.ID ?? "", Attributes: attributes === null ? null : new GoMap(attributes) },
      scope: e.scope ?? "",
      time: e.time ?? 0,
      timeNano,
    }),
  });
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/** Go's "2006-01-02T15:04:05.000000000Z07:00" in the local zone, for a time in nanoseconds. */
export function rfc3339NanoFixed(nanos: bigint): string {
  const ms = Number(nanos / 1_000_000n);
  const d = new Date(ms - (Number(nanos % 1_000_000n) < 0 ? 1 : 0));
  const frac = ((nanos % 1_000_000_000n) + 1_000_000_000n) % 1_000_000_000n;
  const offset = -d.getTimezoneOffset();
  const zone = offset === 0 ? "Z" : `${offset < 0 ? "-" : "+"}${pad(Math.trunc(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${String(frac).padStart(9, "0")}${zone}`;
}

/** The default line of an event (without its newline). */
export function eventLine(e: EventMessage, timeNano: bigint): string {
  let line = "";
  if (timeNano !== 0n) line += `${rfc3339NanoFixed(timeNano)} `;
  else if (e.time) line += `${rfc3339NanoFixed(BigInt(e.time) * 1_000_000_000n)} `;
  line += `${e.Type ?? ""} ${e.Action ?? ""} ${e.Actor?.ID ?? ""}`;
  const attrs = e.Actor?.Attributes ?? {};
  const keys = Object.keys(attrs).sort();
  if (keys.length) line += ` (${keys.map((k) => `${k}=${attrs[k]}`).join(", ")})`;
  return line;
}
