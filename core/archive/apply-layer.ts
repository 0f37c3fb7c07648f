/**
 * `applyLayer`: reads an uncompressed layer tar (tar-reader.ts, the input pushed in chunk by
 * chunk) and hands each entry to the `LayerWriter` by its kind. This is where entries are named
 * and checked before anything is written: names cleaned (`safe-path`), whiteouts recognised
 * (`whiteouts`, unless the tar is no layer), device nodes and fifos refused unless allowed or
 * skipped, unknown entry kinds refused. Any failure stops the whole apply with an error that
 * names the entry (`LayerEntryError`); the caller removes the half-made layer.
 */
import { realpath, stat } from "node:fs/promises";
import type { Readable } from "node:stream";
import { forEachChunk } from "./chunks.js";
import { sparseInfo, type SparseInfo } from "./file-data.js";
import { LayerWriter, type ApplyOptions } from "./layer-writer.js";
import { directOutlet } from "./outlet.js";
import { entryMeta, type TarHeader } from "./metadata.js";
import { cleanEntryName, LayerEntryError } from "./safe-path.js";
import { TarReader, type EntryData } from "./tar-reader.js";
import { hostOwner } from "../userns/id-map.js";
import { applyWhiteout, classifyWhiteout, whiteoutMakesNode } from "./whiteouts.js";

export type { ApplyOptions } from "./layer-writer.js";

const NODE_TYPES = { "character-device": "c", "block-device": "b", fifo: "p" } as const;

/**
 * Extracts the layer tar `tar` into the existing directory `dir`. Resolves with the bytes of
 * regular files written. Nothing is created, changed or removed outside `dir`. On failure `tar`
 * is destroyed and `dir` is left as far as it got.
 */
export async function applyLayer(tar: Readable, dir: string, opts: ApplyOptions): Promise<{ size: number }> {
  // The input may fail (a download cut) while the folder is looked at, before anything reads
  // it: its error must not be an uncaught one. It stays in `tar.errored`, which the reading
  // below meets and the catch reports.
  tar.on("error", () => {});
  const root = await realpath(dir);
  if (!(await stat(root)).isDirectory()) throw new Error(`${dir} is not a directory`);
  const writer = new LayerWriter(root, opts);
  // old v7 tars have no "ustar" magic
  const reader = new TarReader((header) => onEntry(writer, header), { allowUnknownFormat: true, record: opts.layout });
  try {
    // a decoder's output hands its chunks over directly when it can (outlet.ts); any other
    // stream is read as it comes
    const direct = directOutlet(tar)?.direct((chunk) => reader.write(chunk));
    await (direct ?? forEachChunk(tar, (chunk) => reader.write(chunk)));
    await reader.end();
    await writer.finish();
    return { size: writer.size };
  } catch (e) {
    const sourceError = tar.errored;
    tar.destroy();
    await writer.closeOpenFile();
    throw sourceError ?? e; // a failed download is the input's error, not the entry's
  }
}

/** An entry: checked, named, then made (a file's data is to come); its failures name it. */
async function onEntry(writer: LayerWriter, header: TarHeader): Promise<EntryData | undefined> {
  try {
    const data = await applyEntry(writer, header);
    return data && named(header.name, data);
  } catch (e) {
    throw entryError(header.name, e);
  }
}

function entryError(name: string, e: unknown): LayerEntryError {
  return e instanceof LayerEntryError ? e : new LayerEntryError(name, (e as Error).message, { cause: e });
}

/** `data` whose failures (a write that fails, a bad sparse map) name the entry. */
function named(name: string, data: EntryData): EntryData {
  const wrap = (call: () => Promise<void> | void): Promise<void> | undefined => {
    let result;
    try {
      result = call();
    } catch (e) {
      throw entryError(name, e);
    }
    return result instanceof Promise ? result.catch((e) => Promise.reject(entryError(name, e))) : undefined;
  };
  return { layoutPath: data.layoutPath, data: (piece) => wrap(() => data.data(piece)), end: () => wrap(() => data.end()) };
}

async function applyEntry(w: LayerWriter, h: TarHeader): Promise<EntryData | undefined> {
  const entry = h.name;
  const isFile = h.type === "file" || h.type === "contiguous-file";
  let sparse: SparseInfo | undefined;
  if (isFile) sparse = sparseInfo(h.pax);
  const parts = cleanEntryName(sparse?.name ?? h.name, w.opts.clampDotDot);
  const wh = parts.length > 0 && w.opts.whiteouts !== "none" ? classifyWhiteout(parts[parts.length - 1]) : undefined;
  // Owners move to the host's ids under a user namespace map; whiteouts keep theirs (overlayfs
  // itself makes them 0:0, whoever deletes).
  const asked = entryMeta(h);
  const meta = w.opts.idMap && !wh ? { ...asked, ...hostOwner(w.opts.idMap, asked) } : asked;
  const nodeType = h.type && h.type in NODE_TYPES ? NODE_TYPES[h.type as keyof typeof NODE_TYPES] : undefined;

  const makesNode = wh ? whiteoutMakesNode(wh, w.opts.whiteouts) : nodeType !== undefined;
  const batchKey = parts.slice(0, -1).join("/");
  if (!makesNode || !w.acceptsNode(batchKey)) await w.flushNodes();

  if (wh) return void (await applyWhiteout(w, entry, parts, wh, meta));
  if (h.type === "directory") return void (await w.directory(entry, parts, meta));
  if (parts.length === 0) throw new LayerEntryError(entry, `a ${h.type} entry for the layer directory itself`);
  if (isFile) {
    const size = sparse ? sparse.size : (h.size ?? 0);
    if (!Number.isSafeInteger(size) || size < 0) throw new LayerEntryError(entry, "a bad file size");
    return w.file(entry, parts, meta, size, sparse);
  }
  switch (h.type) {
    case "symlink":
      return void (await w.symlink(entry, parts, meta, h.linkname ?? ""));
    case "link":
      return void (await w.hardlink(entry, parts, h.linkname ?? ""));
  }
  if (nodeType) {
    if (w.opts.skipDevices) return undefined;
    if (!w.opts.allowDevices) throw new LayerEntryError(entry, `${h.type} entries are not allowed in this layer`);
    return void (await w.node(entry, parts, batchKey, { type: nodeType, major: h.devmajor ?? 0, minor: h.devminor ?? 0 }, meta));
  }
  throw new LayerEntryError(entry, `unsupported entry type ${h.type ?? "(GNU sparse or another tar extension)"}`);
}
