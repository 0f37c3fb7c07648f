/**
 * Image events in Docker's shape: the actor is the image's ID (for a pull or a push, the
 * reference as the client named it, `busybox:latest`); its attributes are the image's labels
 * while the image exists, and `name`: the new tag on `tag`, the repository on `pull` and
 * `push`, the image's ID on the others (`untag`, `delete`, `import`, `load`, `save`), as
 * Docker's daemon fills them.
 */
import { makeEvent, type EngineEvent } from "../../core/events/event.js";
import type { DeleteEntry, Image, ImageStore } from "../../core/images/image-store.js";
import { familiarName, formatReference, parseReference, repositoryOf } from "../../core/images/reference.js";

export function imageEvent(image: Pick<Image, "id" | "config"> | string, action: string, name: string): EngineEvent {
  const id = typeof image === "string" ? image : image.id;
  const labels = typeof image === "string" ? {} : (image.config.config?.Labels ?? {});
  return makeEvent("image", action, id, { ...labels, name });
}

/** `tag`: the image and its new name in the short form (`app:v1`). */
export function imageTagEvent(image: Image, reference: string): EngineEvent {
  return imageEvent(image, "tag", familiarName(reference));
}

/**
 * `pull` and `push`: the actor is the reference as asked (`busybox:latest`, or `busybox` for
 * every tag), `name` its repository; the labels are those of the image it names now, if any.
 */
export function imageTransferEvent(store: ImageStore, action: "pull" | "push", reference: string): EngineEvent {
  const ref = parseReference(reference, null);
  const shown = familiarName(formatReference(ref));
  let labels: Record<string, string> = {};
  try {
    labels = store.resolve(shown).config.config?.Labels ?? {};
  } catch {
    // every tag of a repository, or a digest no tag names: no single image to read labels from
  }
  return makeEvent("image", action, shown, { ...labels, name: familiarName(repositoryOf(ref)) });
}

/**
 * The events of an image removal from what it answered: `untag` for each name removed (with the
 * image's labels, it still existed then) and `delete` for the image and for each of its
 * `ancestors` (IDs taken before the removal) that went with it, as Docker logs a build's
 * intermediate images going with the last one; the layers' entries are no images.
 */
export function imageDeleteEvents(image: Image, entries: readonly DeleteEntry[], ancestors: readonly string[] = []): EngineEvent[] {
  const out: EngineEvent[] = [];
  for (const entry of entries) {
    if ("Untagged" in entry) out.push(imageEvent(image, "untag", image.id));
    else if (entry.Deleted === image.id || ancestors.includes(entry.Deleted)) out.push(imageEvent(entry.Deleted, "delete", entry.Deleted));
  }
  return out;
}
