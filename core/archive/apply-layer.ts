/**
 * `applyLayer`: reads an uncompressed layer tar with tar-stream and hands each entry to the
 * `LayerWriter` by its kind. This is where entries are named and checked before anything is
 * written: names cleaned (`safe-path`), whiteouts recognised (`whiteouts`), device nodes and
 * fifos refused unless allowed, unknown entry kinds refused. Any failure stops the whole apply
 * with an error that names the entry (`LayerEntryError`); the caller removes the half-made layer.
 */
import { realpath, stat } from "node:fs/promises";
import type { Readable } from "node:stream";
import { extract } from "tar-stream";
import { sparseInfo, type SparseInfo } from "./file-data.js";
import { LayerWriter, type ApplyOptions } from "./layer-writer.js";
import { entryMeta, type TarHeader } from "./metadata.js";
import { installBinaryPax } from "./pax-binary.js";
import { cleanEntryName, LayerEntryError } from "./safe-path.js";
import { hostOwner } from "../userns/id-map.js";
import { applyWhiteout, classifyWhiteout, whiteoutMakesNode } from "./whiteouts.js";

export type { ApplyOptions } from "./layer-writer.js";

const NODE_TYPES = { "character-device": "c", "block-device": "b", fifo: "p" } as const;

/**
 * Extracts the layer tar `tar` into the existing directory `dir`. Resolves with the bytes of
 * regular files written. Nothing is created, changed or removed outside `dir`. On failure `tar`
 * is destroyed and `dir` is left as far as it got. Feed it large chunks (1 MiB reads rather than
 * 64 KiB) where there is a choice: the tar reader's cost is per chunk.
 */
export async function applyLayer(tar: Readable, dir: string, opts: ApplyOptions): Promise<{ size: number }> {
  installBinaryPax();
  const root = await realpath(dir);
  if (!(await stat(root)).isDirectory()) throw new Error(`${dir} is not a directory`);
  const writer = new LayerWriter(root, opts);
  // old v7 tars have no "ustar" magic (tar-stream's types leave the option out)
  const ex = extract({ allowUnknownFormat: true } as Parameters<typeof extract>[0]);
  let sourceError: Error | undefined;
  const onSourceError = (e: Error) => {
    sourceError = e;
    ex.destroy(e);
  };
  tar.once("error", onSourceError);
  tar.pipe(ex as unknown as NodeJS.WritableStream);
  try {
    for await (const entry of ex) {
      const header = entry.header as unknown as TarHeader;
      try {
        await applyEntry(writer, header, entry as unknown as AsyncIterable<Buffer>);
      } catch (e) {
        if (e instanceof LayerEntryError) throw e;
        throw new LayerEntryError(header.name, (e as Error).message, { cause: e });
      }
      for await (const _ of entry); // read what the entry did not (its data must be consumed)
    }
    await writer.finish();
    return { size: writer.size };
  } catch (e) {
    tar.unpipe(ex as unknown as NodeJS.WritableStream);
    tar.destroy();
    ex.destroy();
    throw sourceError ?? e; // a failed download is the input's error, not the entry's
  } finally {
    tar.off("error", onSourceError);
  }
}

async function applyEntry(w: LayerWriter, h: TarHeader, data: AsyncIterable<Buffer>): Promise<void> {
  const entry = h.name;
  const isFile = h.type === "file" || h.type === "contiguous-file";
  let sparse: SparseInfo | undefined;
  if (isFile) sparse = sparseInfo(h.pax);
  const parts = cleanEntryName(sparse?.name ?? h.name);
  const wh = parts.length > 0 ? classifyWhiteout(parts[parts.length - 1]) : undefined;
  // Owners move to the host's ids under a user namespace map; whiteouts keep theirs (overlayfs
  // itself makes them 0:0, whoever deletes).
  const asked = entryMeta(h);
  const meta = w.opts.idMap && !wh ? { ...asked, ...hostOwner(w.opts.idMap, asked) } : asked;
  const nodeType = h.type && h.type in NODE_TYPES ? NODE_TYPES[h.type as keyof typeof NODE_TYPES] : undefined;

  const makesNode = wh ? whiteoutMakesNode(wh, w.opts.whiteouts) : nodeType !== undefined;
  const batchKey = parts.slice(0, -1).join("/");
  if (!makesNode || !w.acceptsNode(batchKey)) await w.flushNodes();

  if (wh) return applyWhiteout(w, entry, parts, wh, meta);
  if (h.type === "directory") return w.directory(entry, parts, meta);
  if (parts.length === 0) throw new LayerEntryError(entry, `a ${h.type} entry for the layer directory itself`);
  if (isFile) {
    const size = sparse ? sparse.size : (h.size ?? 0);
    if (!Number.isSafeInteger(size) || size < 0) throw new LayerEntryError(entry, "a bad file size");
    return w.file(entry, parts, meta, data, size, sparse);
  }
  switch (h.type) {
    case "symlink":
      return w.symlink(entry, parts, meta, h.linkname ?? "");
    case "link":
      return w.hardlink(entry, parts, h.linkname ?? "");
  }
  if (nodeType) {
    if (!w.opts.allowDevices) throw new LayerEntryError(entry, `${h.type} entries are not allowed in this layer`);
    return w.node(entry, parts, batchKey, { type: nodeType, major: h.devmajor ?? 0, minor: h.devminor ?? 0 }, meta);
  }
  throw new LayerEntryError(entry, `unsupported entry type ${h.type ?? "(GNU sparse or another tar extension)"}`);
}
