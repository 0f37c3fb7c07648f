/**
 * A container's layer (a RUN step's, a commit's) without the runtime's mount points. To bind `/etc/hosts`, `/etc/hostname`
 * and `/etc/resolv.conf` (and mount `/proc`, `/sys`, `/dev`) where the image has none, the
 * runtime makes empty files and folders in the container's writable layer, so its diff holds
 * them, as it holds what the start makes of Docker's init layer (host/containers/init-layer.ts:
 * `/.dockerenv`, `/etc/mtab`...). Docker makes them in the container's init layer instead, under the writable one: they
 * are never in a build step's layer (a `RUN true` makes no layer there) nor in a commit's (a
 * commit of a container that changed nothing adds no layer). So they are left out
 * here: an empty file at one of those paths (the RUN could not write one: the mount is on it),
 * and one of their folders (root's, 0755, as the runtime makes them) with nothing else under it.
 * The tar is rewritten only when it has such entries, its other entries copied byte for byte.
 */
import { closeSync, openSync, readSync } from "node:fs";
import { open, rename, rm } from "node:fs/promises";
import { ENTRIES } from "./init-layer.js";

/** The paths (relative to the root) of the init layer's entries of a kind. */
const initLayer = (kind: "file" | "dir") => ENTRIES.filter(([, e]) => e.kind === kind).map(([path]) => path.slice(1));

const BLOCK = 512;
const MOUNT_FILES = new Set(["etc/hosts", "etc/hostname", "etc/resolv.conf", ...initLayer("file")]);
/** The init layer's symlinks (host/containers/init-layer.ts), by path: their targets. */
const INIT_LINKS = new Map(ENTRIES.flatMap(([path, e]) => (e.kind === "symlink" ? [[path.slice(1), e.target] as const] : [])));
const MOUNT_DIRS = new Set(["etc", "dev", "dev/mqueue", ...initLayer("dir")]);

interface Entry {
  /** The byte range of the entry, its PAX or long-name headers included. */
  start: number;
  end: number;
  name: string;
  type: string;
  size: number;
  mode: number;
  uid: number;
  gid: number;
  /** A link's target. */
  link: string;
}

/** A numeric field: octal text, or base-256 when its first byte has the high bit. */
function numberField(block: Buffer, at: number, length: number): number {
  const field = block.subarray(at, at + length);
  if (field[0] & 0x80) return field.subarray(1).reduce((n, b) => n * 256 + b, field[0] & 0x7f);
  const text = field.toString("latin1").replace(/\0.*$/s, "").trim();
  return text ? parseInt(text, 8) : 0;
}

const textField = (block: Buffer, at: number, length: number) => block.subarray(at, at + length).toString("utf8").replace(/\0.*$/s, "");

/** A name as a path relative to the root: no `./`, no leading or trailing `/`. */
const cleanName = (name: string) => name.replace(/^(\.?\/)+/, "").replace(/\/+$/, "");

function readAt(fd: number, position: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, got, length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}

/** The tar's entries, read from their headers (the data is skipped). */
function entriesOf(fd: number): Entry[] {
  const out: Entry[] = [];
  let position = 0;
  let start = 0;
  let longName: string | undefined;
  let paxSize: number | undefined;
  for (;;) {
    const block = readAt(fd, position, BLOCK);
    if (block.length < BLOCK || block.every((b) => b === 0)) break;
    const type = String.fromCharCode(block[156] || 0x30);
    const size = type === "x" || type === "L" || type === "K" || paxSize === undefined ? numberField(block, 124, 12) : paxSize;
    const dataAt = position + BLOCK;
    position = dataAt + Math.ceil(size / BLOCK) * BLOCK;
    if (type === "x" || type === "L" || type === "K") {
      const data = readAt(fd, dataAt, size).toString("utf8");
      if (type === "L") longName = data.replace(/\0.*$/s, "");
      else if (type === "x") {
        for (const m of data.matchAll(/\d+ path=([^\n]*)\n/g)) longName = m[1];
        for (const m of data.matchAll(/\d+ size=(\d+)\n/g)) paxSize = Number(m[1]);
      }
      continue; // the entry they describe follows
    }
    const prefix = block.subarray(257, 262).toString("latin1") === "ustar" ? textField(block, 345, 155) : "";
    const name = longName ?? (prefix ? `${prefix}/${textField(block, 0, 100)}` : textField(block, 0, 100));
    out.push({ start, end: position, name: cleanName(name), type, size, mode: numberField(block, 100, 8) & 0o7777, uid: numberField(block, 108, 8), gid: numberField(block, 116, 8), link: textField(block, 157, 100) });
    start = position;
    longName = undefined;
    paxSize = undefined;
  }
  return out;
}

/** The entries that are only the runtime's mount points. */
function mountPoints(entries: readonly Entry[]): Set<Entry> {
  const drop = new Set<Entry>();
  for (const e of entries) if (MOUNT_FILES.has(e.name) && (e.type === "0" || e.type === "\0") && e.size === 0) drop.add(e);
  for (const e of entries) if (e.type === "2" && INIT_LINKS.get(e.name) === e.link) drop.add(e);
  // deepest first: `dev/pts` goes before `dev` is looked at
  const dirs = entries.filter((e) => e.type === "5" && MOUNT_DIRS.has(e.name) && e.mode === 0o755 && e.uid === 0 && e.gid === 0);
  for (const dir of dirs.sort((a, b) => b.name.length - a.name.length)) {
    const holdsMore = entries.some((e) => !drop.has(e) && e.name.startsWith(`${dir.name}/`));
    if (!holdsMore) drop.add(dir);
  }
  return drop;
}

/**
 * Rewrites the layer tar at `file` without the runtime's mount points (nothing is done when it
 * has none). The headers are read on the event loop (a block each); the copy, as big as the
 * layer, goes through the thread pool, so that a commit of a large layer does not hold the daemon.
 */
export async function withoutMountPoints(file: string): Promise<void> {
  const fd = openSync(file, "r");
  let drop: Set<Entry>;
  let entries: Entry[];
  try {
    entries = entriesOf(fd);
    drop = mountPoints(entries);
  } finally {
    closeSync(fd);
  }
  if (drop.size === 0) return;
  const rewritten = `${file}.tmp`;
  const input = await open(file, "r");
  try {
    const out = await open(rewritten, "wx", 0o600);
    try {
      const buf = Buffer.alloc(1024 * 1024);
      for (const e of entries) {
        if (drop.has(e)) continue;
        for (let at = e.start; at < e.end; ) {
          const { bytesRead } = await input.read(buf, 0, Math.min(buf.length, e.end - at), at);
          if (bytesRead === 0) throw new Error(`layer tar ${file} ends early`);
          await out.write(buf, 0, bytesRead);
          at += bytesRead;
        }
      }
      await out.write(Buffer.alloc(2 * BLOCK)); // the end of the archive
    } finally {
      await out.close();
    }
    await rename(rewritten, file);
  } catch (err) {
    await rm(rewritten, { force: true });
    throw err;
  } finally {
    await input.close();
  }
}
