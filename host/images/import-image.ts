/**
 * `POST /images/create?fromSrc=`: an image made of one layer, the root filesystem tar in the
 * request body (`fromSrc=-`) or at a URL, with the configuration the `changes` give.
 */
import { randomBytes } from "node:crypto";
import { createWriteStream, rmSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { Agent, interceptors, request } from "undici";
import { decompress } from "../../core/archive/index.js";
import { errors } from "../../core/errors.js";
import type { ImageConfig } from "../../core/images/image-config.js";
import type { Image, ImageStore } from "../../core/images/image-store.js";
import { digestOfFile } from "../../core/images/blob-store.js";
import { PRIVATE_FILE } from "../../core/state-modes.js";
import { applyChanges } from "./changes.js";

export interface ImportOptions {
  source: Readable;
  /** `-` or the URL the tar came from, for the history's comment. */
  from: string;
  tags: string[];
  message?: string;
  changes: string[];
  disablePigz: boolean;
}

/** Downloads follow up to five redirects, as Docker's do. */
const redirecting = new Agent().compose(interceptors.redirect({ maxRedirections: 5 }));

const GOARCH: Record<string, string> = { x64: "amd64", arm64: "arm64", arm: "arm", ia32: "386", ppc64: "ppc64le", s390x: "s390x" };

export async function openImportSource(fromSrc: string, body: Readable): Promise<Readable> {
  if (fromSrc === "-") return body;
  let url: URL;
  try {
    url = new URL(fromSrc.includes("://") ? fromSrc : `http://${fromSrc}`);
  } catch {
    throw errors.imageInvalidArchive(`fromSrc "${fromSrc}" is neither "-" nor a URL`);
  }
  const res = await request(url, { method: "GET", dispatcher: redirecting });
  if (res.statusCode >= 400) {
    await res.body.dump();
    throw errors.imageInvalidArchive(`downloading ${url.href} answered ${res.statusCode}`);
  }
  return res.body as unknown as Readable;
}

export async function importImage(store: ImageStore, opts: ImportOptions): Promise<Image> {
  const tarFile = join(store.tmpDir, `import-${randomBytes(8).toString("hex")}.tar`);
  try {
    // the file becomes the layer's blob as it is (renamed): private from the start
    await pipeline(decompress(opts.source, { disablePigz: opts.disablePigz }), createWriteStream(tarFile, { mode: PRIVATE_FILE }));
    const { digest } = await digestOfFile(tarFile);
    const now = new Date().toISOString();
    const config: ImageConfig = {
      architecture: GOARCH[process.arch] ?? process.arch,
      os: "linux",
      created: now,
      ...(opts.message ? { comment: opts.message } : {}),
      config: applyChanges({}, opts.changes),
      rootfs: { type: "layers", diff_ids: [digest] },
      history: [{ created: now, created_by: "", comment: opts.message || `Imported from ${opts.from}` }],
    };
    return await store.create(Buffer.from(JSON.stringify(config)), [tarFile], opts.tags);
  } finally {
    rmSync(tarFile, { force: true });
  }
}
