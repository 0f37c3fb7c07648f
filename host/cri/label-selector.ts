/** The CRI's list filters select by labels: every key of the selector present with its value (ANDed). */
export function matchesLabels(labels: Record<string, string>, selector: Record<string, string> | undefined | null): boolean {
  return Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);
}
