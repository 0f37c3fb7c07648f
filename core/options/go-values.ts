/**
 * Values as Docker's daemon parses them, with the words of its errors: log drivers report a bad
 * `--log-opt` value with the message Go's parser gives (`strconv.Atoi: parsing "x": invalid
 * syntax`), and clients compare those messages with Docker's. Each function throws an Error
 * whose message is exactly Go's.
 */

/** Go's strconv.Quote for the ASCII cases option values have. */
function goQuote(s: string): string {
  return JSON.stringify(s);
}

/** Go's strconv.Atoi (a 64-bit int): an optional sign and decimal digits. */
export function goAtoi(raw: string): number {
  if (!/^[+-]?\d+$/.test(raw)) throw new Error(`strconv.Atoi: parsing ${goQuote(raw)}: invalid syntax`);
  const n = BigInt(raw);
  if (n > 2n ** 63n - 1n || n < -(2n ** 63n)) throw new Error(`strconv.Atoi: parsing ${goQuote(raw)}: value out of range`);
  return Number(n);
}

/** Go's strconv.ParseBool. */
export function goParseBool(raw: string): boolean {
  if (["1", "t", "T", "TRUE", "true", "True"].includes(raw)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(raw)) return false;
  throw new Error(`strconv.ParseBool: parsing ${goQuote(raw)}: invalid syntax`);
}

const DECIMAL: Record<string, number> = { "": 1, k: 1e3, m: 1e6, g: 1e9, t: 1e12, p: 1e15 };

/**
 * go-units' FromHumanSize as Docker 20.10 has it: decimal (`1k` = 1000, `10m` = 10,000,000),
 * `1.5k`, `10 MB`, `10mib` (the `i` changes nothing); anything else, negative numbers included,
 * is `invalid size: '<value>'`. Used for the json-file and local drivers' `max-size`.
 */
export function goFromHumanSize(raw: string): number {
  const m = /^(\d+(?:\.\d+)*) ?([kKmMgGtTpP])?[iI]?[bB]?$/.exec(raw);
  const n = m ? Number(m[1]) : NaN;
  if (!m || Number.isNaN(n)) throw new Error(`invalid size: '${raw}'`);
  return Math.trunc(n * DECIMAL[(m[2] ?? "").toLowerCase()]);
}
