/**
 * Extended attributes, through @napi-rs/xattr (its `l*` calls: a symlink's own, never its
 * target's), loaded when layers are first packed or unpacked (core/lazy-require.ts says why).
 */
import { lazyRequire } from "../lazy-require.js";

export const xattr = lazyRequire<typeof import("@napi-rs/xattr")>("@napi-rs/xattr");
