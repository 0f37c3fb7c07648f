/** Sizes and durations as the Docker CLI writes them in progress bars (go-units, Go's time.Duration). */

// sizes: go-units' HumanSize, shared with the listings
export { humanSize } from "../../core/go-units.js";

/** Go's Duration.String for whole seconds: 0s, 45s, 1m5s, 2h0m3s. */
export function goDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (h > 0) return `${h}h${m}m${s % 60}s`;
  if (m > 0) return `${m}m${s % 60}s`;
  return `${s}s`;
}
