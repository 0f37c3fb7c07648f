/**
 * Times as the Docker CLI shows them: the go-units durations ("Less than a second", "About a
 * minute", "3 hours"), a container's status line ("Up 3 seconds", "Exited (0) 5 seconds ago"),
 * and Go's `time.Time.String()` ("2026-11-22 12:31:29 +0000 UTC") for the CreatedAt fields.
 */

/** go-units HumanDuration, for a duration in milliseconds. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < 1) return "Less than a second";
  if (seconds === 1) return "1 second";
  if (seconds < 60) return `${seconds} seconds`;
  const minutes = Math.trunc(ms / 60_000);
  if (minutes === 1) return "About a minute";
  if (minutes < 60) return `${minutes} minutes`;
  const hours = Math.trunc(ms / 3_600_000 + 0.5);
  if (hours === 1) return "About an hour";
  if (hours < 48) return `${hours} hours`;
  if (hours < 24 * 7 * 2) return `${Math.trunc(hours / 24)} days`;
  if (hours < 24 * 30 * 2) return `${Math.trunc(hours / 24 / 7)} weeks`;
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24 / 30)} months`;
  return `${Math.trunc(ms / 3_600_000 / 24 / 365)} years`;
}

/** "2 minutes ago" for a time in seconds since the epoch (the CREATED columns). */
export function since(unixSeconds: number, now = Date.now()): string {
  return `${humanDuration(now - unixSeconds * 1000)} ago`;
}

/** The status line the daemon gives in lists; here for completeness of the client's own views. */
export function statusLine(state: { Status: string; StartedAt?: string; FinishedAt?: string; ExitCode?: number }, now = Date.now()): string {
  const at = (t?: string) => (t ? Date.parse(t) : NaN);
  switch (state.Status) {
    case "running":
      return `Up ${humanDuration(now - at(state.StartedAt))}`;
    case "paused":
      return `Up ${humanDuration(now - at(state.StartedAt))} (Paused)`;
    case "exited":
      return `Exited (${state.ExitCode ?? 0}) ${humanDuration(now - at(state.FinishedAt))} ago`;
    case "created":
      return "Created";
    case "dead":
      return "Dead";
    case "removing":
      return "Removal In Progress";
    case "restarting":
      return `Restarting (${state.ExitCode ?? 0}) ${humanDuration(now - at(state.FinishedAt))} ago`;
    default:
      return state.Status;
  }
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
