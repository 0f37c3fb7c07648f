/**
 * Writing tar entries from what a walk holds, shared by the layer packer (pack-layer.ts) and
 * `docker cp`'s (host/containers/files/scoped-pack.ts): headers from stats, and a regular
 * file's data from a descriptor already open on it (so the data is the inode's whose stats the
 * header took). A file that shrinks while it is read is padded with zeros to its header's size,
 * as GNU tar does, so the tar stays whole; one that grows is cut at that size.
 */
import type { Stats } from "node:fs";
import { once } from "node:events";
import { readSync } from "node:fs";
import type { Header as TarStreamHeader, Pack } from "tar-stream";
import { containerOwner, type IdMap } from "../userns/id-map.js";

export type Header = Partial<Omit<TarStreamHeader, "pax">> & { name: string; pax?: Record<string, string> };

/** File data is read in pieces of at most this size. */
const READ_CHUNK = 1024 * 1024;

/** Largest uid/gid the ustar header holds (6 octal digits); larger ones go in PAX records. */
const USTAR_MAX_ID = 0o777777;

/** Names in byte order, as Go's filepath.Walk gives them. */
export function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** Linux's dev_t split into major and minor. */
export function devNumbers(rdev: number): { devmajor: number; devminor: number } {
  const r = BigInt(rdev);
  return {
    devmajor: Number(((r >> 8n) & 0xfffn) | ((r >> 32n) & ~0xfffn)),
    devminor: Number((r & 0xffn) | ((r >> 12n) & ~0xffn)),
  };
}

/** A header's name, mode, owner (as container ids under `idMap`) and mtime (whole seconds) from `st`. */
export function statsHeader(name: string, st: Stats, idMap?: IdMap): Header {
  const { uid, gid } = idMap ? containerOwner(idMap, st) : st;
  const h: Header = {
    name,
    // tar-stream replaces a mode of 0 with its default; the type bits keep it non-zero and
    // are masked off when the header is written
    mode: st.mode,
    uid,
    gid,
    mtime: new Date(Math.floor(st.mtimeMs / 1000) * 1000),
  };
  const pax: Record<string, string> = {};
  if (uid > USTAR_MAX_ID) pax.uid = String(uid);
  if (gid > USTAR_MAX_ID) pax.gid = String(gid);
  if (Object.keys(pax).length > 0) h.pax = pax;
  return h;
}

/**
 * tar-stream tells an entry's failure (the pack destroyed: its reader went away) to the
 * entry's callback and also as an `error` event of the entry's stream, which without a listener
 * would end the daemon: both go to the one promise.
 */
function heard(entry: ReturnType<Pack["entry"]>, rej: (err: Error) => void): void {
  (entry as unknown as NodeJS.EventEmitter).on("error", rej);
}

/** An entry without data (an empty file — whiteouts — is given its empty body, or tar-stream waits for one). */
export function writeEntry(pack: Pack, h: Header): Promise<void> {
  return new Promise((res, rej) => {
    const done = (err?: Error | null) => (err ? rej(err) : res());
    heard(h.type === "file" ? pack.entry(h, Buffer.alloc(0), done) : pack.entry(h, done), rej);
  });
}

/** A regular file's entry, its `h.size` bytes read from the open `fd` (which the caller closes). */
export async function writeFileEntry(pack: Pack, h: Header, fd: number): Promise<void> {
  if (!h.size) return writeEntry(pack, h);
  let sink!: ReturnType<Pack["entry"]>;
  const finished = new Promise<void>((res, rej) => {
    sink = pack.entry(h, (err) => (err ? rej(err) : res()));
    heard(sink, rej);
  });
  let left = h.size;
  while (left > 0) {
    const buf = Buffer.allocUnsafe(Math.min(left, READ_CHUNK)); // a new one each time: the pack keeps it
    const n = readSync(fd, buf, 0, buf.length, null);
    if (n === 0) buf.fill(0); // shrank: the rest is zeros
    left -= n === 0 ? buf.length : n;
    if (!sink.write(n === 0 || n === buf.length ? buf : buf.subarray(0, n))) {
      await Promise.race([once(sink as unknown as NodeJS.EventEmitter, "drain"), finished]);
    }
  }
  (sink as unknown as NodeJS.WritableStream).end();
  await finished;
}
