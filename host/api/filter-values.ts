/** Values of the API's `filters` that several lists share: `label` and `until`. */
import { errors } from "../../core/errors.js";

/** `until` of the prune endpoints: Unix seconds, a Go duration back from now (`10m`), or a date. */
export function untilTime(raw: string): number {
  if (/^\d+(\.\d+)?$/.test(raw)) return Number(raw) * 1000;
  const d = /^(\d+)(s|m|h)$/.exec(raw);
  if (d) return Date.now() - Number(d[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[d[2] as "s" | "m" | "h"];
  const ms = Date.parse(raw);
  if (Number.isNaN(ms)) throw errors.apiInvalidParameter("until", raw);
  return ms;
}

/** A `label` filter value: `k` (present) or `k=v`. */
export function hasLabel(labels: Record<string, string> | null | undefined, filter: string): boolean {
  const eq = filter.indexOf("=");
  return eq < 0 ? filter in (labels ?? {}) : labels?.[filter.slice(0, eq)] === filter.slice(eq + 1);
}

/** Every `label` filter holds and no `label!` one does. */
export function labelsMatch(labels: Record<string, string> | null | undefined, filters: Map<string, string[]>): boolean {
  return (filters.get("label") ?? []).every((v) => hasLabel(labels, v)) && !(filters.get("label!") ?? []).some((v) => hasLabel(labels, v));
}
