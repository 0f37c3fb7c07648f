/**
 * `GraphDriver.Data` of the image and container inspect documents: what the storage driver tells
 * of a layer's folders (its `metadata`, Docker's GetMetadata), in the order Go writes a map's keys
 * (sorted); `null` when the driver tells nothing, as Docker's drivers without metadata.
 */
export function graphDriverData(data: Record<string, string> | undefined): Record<string, string> | null {
  if (!data) return null;
  return Object.fromEntries(Object.entries(data).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
