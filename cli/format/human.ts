/**
 * Times as the Docker CLI shows them: "2 minutes ago" from the go-units durations
 * (core/go-units.ts), and Go's `time.Time.String()` ("2026-11-22 12:31:29 +0000 UTC") for the
 * CreatedAt fields.
 */

import { humanDuration } from "../../core/go-units.js";

/** "2 minutes ago" for a time in seconds since the epoch (the CREATED columns). */
export function since(unixSeconds: number, now = Date.now()): string {
  return `${humanDuration(now - unixSeconds * 1000)} ago`;
}

const pad2 = (n: number) => String(n).padStart(2, "0");

/** The local zone's offset and name as Go prints them ("+0000 UTC"). */
function zone(date: Date): string {
  const offset = -date.getTimezoneOffset();
  const sign = offset < 0 ? "-" : "+";
  const abs = Math.abs(offset);
  const numeric = `${sign}${pad2(Math.trunc(abs / 60))}${pad2(abs % 60)}`;
  let name = "";
  try {
    name = new Intl.DateTimeFormat("en-US", { timeZoneName: "short" }).formatToParts(date).find((p) => p.type === "timeZoneName")?.value ?? "";
  } catch {
    name = "";
  }
  // Go names a zone by its tzdata abbreviation; for zones without one it prints the offset
  // ("+01"). Intl says "GMT+1" there, which is not what Go prints.
  if (offset === 0 && (name === "UTC" || name === "GMT" || name === "")) name = "UTC";
  else if (/^GMT[+-]/.test(name) || name === "") name = `${sign}${pad2(Math.trunc(abs / 60))}${abs % 60 ? pad2(abs % 60) : ""}`;
  return `${numeric} ${name}`;
}

/**
 * Go's `time.Time.String()` in the local zone: "2006-01-02 15:04:05.999999999 -0700 MST".
 * `time` is seconds since the epoch, or an RFC 3339 text (whose fraction is kept to the ns).
 */
export function goTimeString(time: number | string): string {
  let ms: number;
  let fraction = "";
  if (typeof time === "number") {
    ms = time * 1000;
  } else {
    ms = Date.parse(time);
    fraction = /\.(\d+)/.exec(time)?.[1]?.slice(0, 9).replace(/0+$/, "") ?? "";
  }
  const d = new Date(Math.floor(ms / 1000) * 1000);
  const text = `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
  return `${text}${fraction ? `.${fraction}` : ""} ${zone(d)}`;
}

/** Go's `time.ANSIC` layout ("Mon Jan  2 15:04:05 2006"), in UTC as the daemon's build time. */
export function ansic(iso: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const d = new Date(t);
  const days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
  const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  return `${days[d.getUTCDay()]} ${months[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, " ")} ${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())} ${d.getUTCFullYear()}`;
}
