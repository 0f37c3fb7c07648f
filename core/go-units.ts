/**
 * Sizes and durations as Docker prints them (its go-units package), for the CLI and the daemon
 * alike: decimal units with a number of significant digits ("1.98MB" with 3, "1.982MB" with 4,
 * the default), binary units for memory ("23.54GiB"), Go's `%.Ng`, which switches to an
 * exponent ("1e+03kB") as Go does, and durations ("About a minute", "3 hours").
 */

const DECIMAL = ["B", "kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"];
const BINARY = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"];

/** Go's `fmt.Sprintf("%.<precision>g", v)`. */
function goG(v: number, precision: number): string {
  if (v === 0) return "0";
  if (!Number.isFinite(v)) return v > 0 ? "+Inf" : v < 0 ? "-Inf" : "NaN";
  const p = Math.max(1, precision);
  const [mant, expText] = v.toExponential(p - 1).split("e");
  const exp = Number(expText);
  if (exp < -4 || exp >= p) {
    const m = mant.includes(".") ? mant.replace(/0+$/, "").replace(/\.$/, "") : mant;
    const sign = exp < 0 ? "-" : "+";
    return `${m}e${sign}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  const fixed = v.toFixed(Math.max(0, p - 1 - exp));
  return fixed.includes(".") ? fixed.replace(/0+$/, "").replace(/\.$/, "") : fixed;
}

function custom(size: number, precision: number, base: number, units: string[]): string {
  let i = 0;
  let v = size;
  while (v >= base && i < units.length - 1) {
    v /= base;
    i++;
  }
  return `${goG(v, precision)}${units[i]}`;
}

/** go-units HumanSizeWithPrecision: "1.98MB" (precision 3), "1.982MB" (4). */
export function humanSize(bytes: number, precision = 4): string {
  return custom(bytes, precision, 1000, DECIMAL);
}

/** go-units BytesSize: binary units, 4 significant digits ("23.54GiB"). */
export function bytesSize(bytes: number): string {
  return custom(bytes, 4, 1024, BINARY);
}

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
