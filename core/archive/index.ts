/**
 * Layer tars in and out, shared by every storage driver (see README.md): `decompress` a
 * downloaded blob, `applyLayer` a tar into a layer folder (a security boundary), `packLayer` a
 * layer folder back into a tar in the OCI form, `treeChanges` + `packChanges` for a layer kept
 * as a whole tree (a snapshot of its parent).
 */
export { createDecompressor, decompress, pump, sniffCompression, type Compression, type Decoder, type DecompressOptions } from "./decompress.js";
export { chunksOf } from "./chunks.js";
export { directOutlet, type Outlet } from "./outlet.js";
export { applyLayer, type ApplyOptions } from "./apply-layer.js";
export { LayoutRecorder, tarFromLayout } from "./tar-layout.js";
export { packChanges, packLayer, type PackOptions } from "./pack-layer.js";
export { treeChanges, changesUsage, type TreeChange, type TreeChangeKind, type TreeDiffOptions } from "./tree-diff.js";
export { LayerEntryError } from "./safe-path.js";
export { archiveFault, type ArchiveFault } from "./archive-fault.js";
export { TarFormatError } from "./tar-reader.js";
export { OPAQUE_MARKER, WHITEOUT_PREFIX } from "./whiteouts.js";
