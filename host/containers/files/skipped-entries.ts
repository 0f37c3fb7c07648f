/**
 * What `docker cp` into a container leaves out, and how the answer tells it.
 *
 * Device nodes and FIFOs in the tar are not made (Docker's extraction refuses them for
 * non-privileged copies): a character or block device would hand the container a device the
 * daemon never granted it (its cgroup rules aside, a `1:3` or a disk's numbers in the container's
 * root filesystem outlive the copy, reach image commits and exports), and a FIFO there is a trap
 * for whoever later opens the name. A hard link to such an entry is left out with it: its target
 * was never made, and linking to whatever else the container has under that name would give the
 * link a meaning the tar did not.
 *
 * Docker answers the copy 200 with an empty body, and its CLI, docker-py (`put_archive` is True on
 * 200) and dockerode take nothing else; so the answer stays so and the skipped entries go in a
 * `Warning` header: RFC 7234's field with code 299 ("miscellaneous persistent warning") and agent
 * `-`, the form Kubernetes' API sends warnings in and its clients print. RFC 9111 retired the
 * field for caches, which never add a 299; it is still a registered field any HTTP client shows,
 * where an `X-Engine-...` name would mean something to our own client only. Bounded (the first
 * `MAX_LISTED` names, each cut, and a count), so no client's header limit is reached. The
 * daemon's log gets one line with the same text.
 */

/** Why an entry was left out. */
export type SkipKind = "character device" | "block device" | "FIFO" | "hard link to a skipped entry";

/** Names kept for the answer (the count covers all of them). */
const MAX_LISTED = 20;
/** Longest name in the answer, in characters once escaped; a longer one is cut with `...`. */
const MAX_NAME = 200;
/** The list stops growing past this many characters, well under a client's header limit (Node's is 16 KiB). */
const MAX_LIST = 2000;

/** The entries one copy left out: how many, and the first `MAX_LISTED` of them. */
export class SkippedEntries {
  count = 0;
  readonly listed: { path: string; kind: SkipKind }[] = [];

  add(path: string, kind: SkipKind): void {
    this.count++;
    if (this.listed.length < MAX_LISTED) this.listed.push({ path, kind });
  }
}

/**
 * A name as it may stand in a quoted string of a header: printable ASCII only, and `"`, `\`,
 * `%` and `,` (the list's separator) escaped as well, all as `%XX` of the UTF-8 bytes. A tar
 * name can hold any byte, a newline too; none of it may reach the header raw.
 */
export function headerSafe(name: string): string {
  let out = "";
  for (const b of Buffer.from(name, "utf8")) {
    const safe = b >= 0x20 && b <= 0x7e && b !== 0x22 && b !== 0x5c && b !== 0x25 && b !== 0x2c;
    out += safe ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out.length > MAX_NAME ? `${out.slice(0, MAX_NAME - 3)}...` : out;
}

/** The text of the warning: the count, why, and the first names with their kind. */
export function skippedText(s: SkippedEntries): string {
  const items: string[] = [];
  let length = 0;
  for (const { path, kind } of s.listed) {
    const item = `${headerSafe(path)} (${kind})`;
    if (items.length > 0 && length + item.length > MAX_LIST) break;
    items.push(item);
    length += item.length + 2;
  }
  const more = s.count - items.length;
  const noun = s.count === 1 ? "entry" : "entries";
  return `${s.count} ${noun} not copied (device nodes and FIFOs are not copied into a container): ${items.join(", ")}${more > 0 ? `, and ${more} more` : ""}`;
}

/** The `Warning` header's value. */
export function skippedWarning(s: SkippedEntries): string {
  return `299 - "${skippedText(s)}"`;
}
