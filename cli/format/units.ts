/**
 * Sizes as the Docker CLI prints them (its go-units package): decimal units with a number of
 * significant digits ("1.98MB" with 3, "1.982MB" with 4, the default), binary units for memory
 * ("23.54GiB"), and Go's `%.Ng`, which switches to an exponent ("1e+03kB") as Go does.
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
