/**
 * What the layer archive tests (test/layer-archive*.test.ts) share: a stream read to the end, a
 * tar of fixture entries applied to a folder, a fresh folder to extract into (under a temporary
 * folder the suites remove), and a tar read back as records (type, mode, owner, mtime, link,
 * contents' sha256, xattrs) to compare what packLayer wrote with what went in.
 */
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { extract } from "tar-stream";
import { applyLayer, type ApplyOptions } from "../../core/archive/index.js";
import { makeTar, type TarEntry } from "../fixtures/layers.js";
import { makeTempDir } from "./engined.js";

export async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

export async function apply(entries: TarEntry[], dir: string, opts: ApplyOptions): Promise<{ size: number }> {
  return applyLayer(Readable.from([await makeTar(entries)]), dir, opts);
}

export function freshDir(prefix = "engine-layer-"): string {
  const dir = join(makeTempDir(prefix), "layer");
  mkdirSync(dir);
  return dir;
}

export interface TarRecord {
  name: string;
  type: string;
  mode: number;
  uid: number;
  gid: number;
  mtime: number;
  linkname: string | null;
  sha: string;
  xattrs: Record<string, string>;
}

export async function readTar(tar: Readable): Promise<TarRecord[]> {
  const ex = extract();
  tar.pipe(ex as unknown as NodeJS.WritableStream);
  const out: TarRecord[] = [];
  for await (const entry of ex) {
    const h = entry.header as typeof entry.header & { pax?: Record<string, string> | null };
    const data = await collect(entry as unknown as Readable);
    const xattrs: Record<string, string> = {};
    for (const [k, v] of Object.entries(h.pax ?? {})) if (k.startsWith("SCHILY.xattr.")) xattrs[k] = Buffer.from(v, "latin1").toString("hex");
    out.push({
      name: h.name.replace(/\/$/, ""),
      type: h.type,
      mode: h.mode & 0o7777,
      uid: h.uid,
      gid: h.gid,
      mtime: h.mtime.getTime() / 1000,
      linkname: h.linkname || null,
      sha: createHash("sha256").update(data).digest("hex"),
      xattrs,
    });
  }
  return out;
}
