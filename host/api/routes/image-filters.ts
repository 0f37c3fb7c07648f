/** The filters of `GET /images/json` and `POST /images/prune`. */
import type { Image, ImageStore } from "../../../core/images/image-store.js";
import { familiarName } from "../../../core/images/reference.js";
import { hasLabel, untilTime } from "../filter-values.js";
import { filterBool } from "../query.js";

/** A glob with `*` and `?` (path.Match's, without `/` crossing), anchored. */
function globMatch(pattern: string, text: string): boolean {
  const re = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*").replace(/\?/g, "[^/]");
  return new RegExp(`^${re}$`).test(text);
}

/**
 * The image's references a `reference` filter matches (Docker's FamiliarMatch: the familiar
 * form with its tag or digest, else without): the only names a filtered list shows of it.
 */
export function matchingReferences(image: Image, patterns: readonly string[]): string[] {
  return image.references.filter((r) => {
    const n = familiarName(r);
    return patterns.some((p) => globMatch(p, n) || globMatch(p, n.replace(/[:@][^/]*$/, "")));
  });
}

export function imageFilter(filters: Map<string, string[]>, store: ImageStore): (image: Image) => boolean {
  const created = (name: string) => Date.parse(store.resolve(name).config.created ?? "") || 0;
  const before = filters.get("before")?.map(created);
  const since = filters.get("since")?.map(created);
  const until = filters.get("until")?.map(untilTime);
  const dangling = filterBool(filters, "dangling");
  return (image) => {
    const time = Date.parse(image.config.created ?? "") || 0;
    if (dangling !== undefined && dangling !== (image.references.length === 0)) return false;
    if (filters.get("reference")?.length && matchingReferences(image, filters.get("reference")!).length === 0) return false;
    if (!(filters.get("label") ?? []).every((w) => hasLabel(image.config.config?.Labels, w))) return false;
    if (before && !before.every((t) => time < t)) return false;
    if (since && !since.every((t) => time > t)) return false;
    if (until && !until.every((t) => time < t)) return false;
    return true;
  };
}
