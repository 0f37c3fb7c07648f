/**
 * The tar of a context folder's entries (context-walk.ts) as the Docker CLI sends it: every
 * owner 0:0 with no user or group name, modes with their setuid/setgid/sticky bits, mtimes in
 * whole seconds, symlinks as symlinks, a file seen again through another hard link as a link
 * entry, devices and fifos as they are, and `security.capability` (the one extended attribute
 * the CLI keeps) as a PAX record. A file that goes as the walk passes is left out, with a line
 * on stderr, as the CLI logs it.
 *
 * With `extra` (a Dockerfile from stdin or from outside the folder), the Dockerfile is added at
 * the end under its generated name, and `.dockerignore` gets that name as a last line (or is
 * added with `.dockerignore` and that name), so the daemon reads it and then leaves it out of
 * the context, as moby's AddDockerfileToBuildContext arranges.
 */
import { getAttributeSync } from "@napi-rs/xattr";
import { closeSync, openSync, readFileSync, readlinkSync } from "node:fs";
import { Readable } from "node:stream";
import { pack as tarPack, type Pack } from "tar-stream";
import { installBinaryPax, XATTR_PREFIX, xattrRecord } from "../../core/archive/pax-binary.js";
import { devNumbers, statsHeader, writeEntry, writeFileEntry, type Header } from "../../core/archive/tar-entries.js";
import type { ContextEntry } from "./context-walk.js";

export interface ExtraDockerfile {
  /** `.dockerfile.<20 hex digits>`. */
  name: string;
  content: Buffer;
}

/** The line `.dockerignore` gets for the generated name; `current` is its text, if there is one. */
export function ignoreWithExtra(current: Buffer | undefined, name: string): Buffer {
  return Buffer.concat([current ?? Buffer.from(".dockerignore"), Buffer.from(`\n${name}\n`)]);
}

/** An added file's header: root's, 0600, now (the CLI's for both files it adds). */
function addedHeader(name: string, size: number): Header {
  return { name, type: "file", mode: 0o600, uid: 0, gid: 0, uname: "", gname: "", mtime: new Date(Math.floor(Date.now() / 1000) * 1000), size };
}

export function packContext(entries: readonly ContextEntry[], extra: ExtraDockerfile | undefined, warn: (text: string) => void): Readable {
  installBinaryPax();
  const pack = tarPack();
  const out = Readable.from(pack, { objectMode: false });
  writeAll(pack, entries, extra, warn).then(
    () => pack.finalize(),
    (e: Error) => pack.destroy(e),
  );
  return out;
}

async function writeAll(pack: Pack, entries: readonly ContextEntry[], extra: ExtraDockerfile | undefined, warn: (text: string) => void): Promise<void> {
  const links = new Map<string, string>();
  let ignoreWritten = false;
  for (const { rel, abs, st } of entries) {
    if (pack.destroyed) return;
    const h = header(rel, abs, st);
    if (st.isDirectory()) {
      await writeEntry(pack, { ...h, name: `${rel}/`, type: "directory" });
    } else if (st.isSymbolicLink()) {
      await writeEntry(pack, { ...h, type: "symlink", linkname: readlinkSync(abs) });
    } else if (st.isFIFO()) {
      await writeEntry(pack, { ...h, type: "fifo" });
    } else if (st.isCharacterDevice() || st.isBlockDevice()) {
      await writeEntry(pack, { ...h, type: st.isCharacterDevice() ? "character-device" : "block-device", ...devNumbers(st.rdev) });
    } else if (st.nlink > 1 && links.has(String(st.ino))) {
      await writeEntry(pack, { ...h, type: "link", linkname: links.get(String(st.ino)), size: 0 });
    } else if (extra && rel === ".dockerignore") {
      const text = ignoreWithExtra(readFileSync(abs), extra.name);
      await writeBuffer(pack, { ...h, type: "file", size: text.length }, text);
      ignoreWritten = true;
    } else {
      let fd: number;
      try {
        fd = openSync(abs, "r");
      } catch (e) {
        warn(`Can't add file ${abs} to tar: ${(e as Error).message}\n`);
        continue;
      }
      try {
        if (st.nlink > 1) links.set(String(st.ino), rel);
        await writeFileEntry(pack, { ...h, type: "file", size: st.size }, fd);
      } finally {
        closeSync(fd);
      }
    }
  }
  if (extra) await appendExtra(pack, extra, ignoreWritten);
}

/** The end of a context with `extra`: `.dockerignore` (unless the context had one) and the Dockerfile. */
export async function appendExtra(pack: Pack, extra: ExtraDockerfile, ignoreWritten: boolean): Promise<void> {
  if (!ignoreWritten) {
    const text = ignoreWithExtra(undefined, extra.name);
    await writeBuffer(pack, addedHeader(".dockerignore", text.length), text);
  }
  await writeBuffer(pack, addedHeader(extra.name, extra.content.length), extra.content);
}

/** The entry's header from its stats, owned by root with no names; `security.capability` as a PAX record. */
function header(rel: string, abs: string, st: ContextEntry["st"]): Header {
  const h: Header = { ...statsHeader(rel, st), uid: 0, gid: 0, uname: "", gname: "" };
  delete h.pax; // only large ids go there, and the ids are 0
  if (st.isFile()) {
    const cap = capability(abs);
    if (cap) h.pax = { [`${XATTR_PREFIX}security.capability`]: xattrRecord(cap) };
  }
  return h;
}

function capability(abs: string): Buffer | undefined {
  try {
    return getAttributeSync(abs, "security.capability") ?? undefined;
  } catch {
    return undefined; // no attribute, or a file system without them
  }
}

export function writeBuffer(pack: Pack, h: Header, data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => pack.entry(h, data, (err) => (err ? reject(err) : resolve())));
}
