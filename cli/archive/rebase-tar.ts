/**
 * go-archive's RebaseArchiveEntries: every entry's name (and a hard link's target) with its
 * first `from` replaced by `to`, so that a copy lands under the destination's name. Entries and
 * their data pass through as they are otherwise.
 */
import { Readable } from "node:stream";
import { extract, pack as tarPack, type Header } from "tar-stream";
import { installBinaryPax } from "../../core/archive/pax-binary.js";

export function rebaseArchiveEntries(source: Readable, from: string, to: string): Readable {
  installBinaryPax();
  const ex = extract();
  const out = tarPack();
  source.once("error", (e) => out.destroy(e));
  source.pipe(ex as unknown as NodeJS.WritableStream);
  void (async () => {
    for await (const entry of ex) {
      const h: Header = { ...entry.header, name: entry.header.name.replace(from, () => to) };
      if (h.type === "link" && h.linkname) h.linkname = h.linkname.replace(from, () => to);
      await new Promise<void>((resolve, reject) => {
        const sink = out.entry(h, (err) => (err ? reject(err) : resolve()));
        (sink as unknown as NodeJS.EventEmitter).on("error", reject);
        (entry as unknown as Readable).pipe(sink as unknown as NodeJS.WritableStream);
      });
    }
    out.finalize();
  })().catch((e: Error) => out.destroy(e));
  return Readable.from(out, { objectMode: false });
}
