/**
 * Layer tars in and out, shared by every storage driver (see README.md): `decompress` a
 * downloaded blob, `applyLayer` a tar into a layer folder (a security boundary), `packLayer` a
 * layer folder back into a tar in the OCI form; `treeChanges` + `packChanges` for drivers that keep
 * full copies and diff a layer's tree against its parent's.
 */
export { decompress, sniffCompression, type Compression, type DecompressOptions } from "./decompress.js";
export { applyLayer, type ApplyOptions } from "./apply-layer.js";
export { packChanges, packLayer, type PackOptions } from "./pack-layer.js";
export { changesUsage, treeChanges, type ChangeKind, type TreeChange } from "./tree-changes.js";
export { LayerEntryError } from "./safe-path.js";
export { OPAQUE_MARKER, WHITEOUT_PREFIX } from "./whiteouts.js";
