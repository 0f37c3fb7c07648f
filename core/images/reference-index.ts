/**
 * The image store's names: reference -> image ID, and each image's references the other way
 * round, so that an image's names cost the same with 10 or 10,000 names in the store (a list
 * of images asks for every image's).
 */
export class ReferenceIndex {
  private readonly byName = new Map<string, string>();
  private readonly byImage = new Map<string, Set<string>>();

  constructor(entries: Iterable<[string, string]> = []) {
    for (const [ref, id] of entries) this.set(ref, id);
  }

  get(ref: string): string | undefined {
    return this.byName.get(ref);
  }

  has(ref: string): boolean {
    return this.byName.has(ref);
  }

  /** Names `id`; the name moves off the image it named before. */
  set(ref: string, id: string): void {
    this.delete(ref);
    this.byName.set(ref, id);
    let names = this.byImage.get(id);
    if (!names) this.byImage.set(id, (names = new Set()));
    names.add(ref);
  }

  delete(ref: string): void {
    const id = this.byName.get(ref);
    if (id === undefined) return;
    this.byName.delete(ref);
    const names = this.byImage.get(id);
    names?.delete(ref);
    if (names?.size === 0) this.byImage.delete(id);
  }

  /** The image's references, sorted. */
  namesOf(id: string): string[] {
    return [...(this.byImage.get(id) ?? [])].sort();
  }

  /** Every reference and its image, sorted by reference (as references.json is written). */
  entries(): [string, string][] {
    return [...this.byName].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }
}
