/**
 * `POST /images/create?fromSrc=`: an image made of one layer, the root filesystem tar in the
 * request body (`fromSrc=-`) or at a URL, with the configuration the `changes` give.
 */
import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { undici } from "../http/undici.js";
import { decompress } from "../../core/archive/index.js";
import { errors } from "../../core/errors.js";
import { goDialError } from "../../core/net/go-dial-error.js";
import { redirectingDispatcher } from "../http/http-get.js";
import type { ImageConfig } from "../../core/images/image-config.js";
import type { Image, ImageStore } from "../../core/images/image-store.js";
import { isRegistryDomain } from "../../core/images/reference.js";
import { digestOfFile } from "../../core/images/blob-store.js";
import { PRIVATE_FILE } from "../../core/state-modes.js";
import { applyChanges } from "./changes.js";
import { clientArchiveError } from "../client-archive-error.js";

export interface ImportOptions {
  source: Readable;
  /** `-` or the URL the tar came from, for the history's comment. */
  from: string;
  tags: string[];
  message?: string;
  changes: string[];
  disablePigz: boolean;
}


const GOARCH: Record<string, string> = { x64: "amd64", arm64: "arm64", arm: "arm", ia32: "386", ppc64: "ppc64le", s390x: "s390x" };

export async function openImportSource(fromSrc: string, body: Readable): Promise<Readable> {
  if (fromSrc === "-") return body;
  const url = importUrl(fromSrc);
  const res = await undici()
    // (up to five redirects, as Docker's import follows)
    .request(url, { method: "GET", dispatcher: redirectingDispatcher(5) })
    .catch((err: unknown) => {
      throw errors.imageImportDownloadFailed(url.href, goDialError(err) ?? (err as Error).message);
    });
  if (res.statusCode >= 400) {
    await res.body.dump();
    throw errors.imageInvalidArchive(`downloading ${url.href} answered ${res.statusCode}`);
  }
  return res.body as unknown as Readable;
}

/**
 * `fromSrc` as the URL to download: one with the http or https scheme, or a host and a path
 * (`host:8000/rootfs.tar`, read as http:// as Docker does). Anything else (a path on the
 * daemon's machine, another scheme, a host name that cannot be one) is the client's mistake,
 * told before anything is looked up.
 */
function importUrl(fromSrc: string): URL {
  const invalid = (why: string) => errors.imageImportSourceInvalid(fromSrc, why);
  if (fromSrc.startsWith("/")) throw invalid("a path on the daemon's machine is no source");
  let url: URL;
  try {
    url = new URL(fromSrc.includes("://") ? fromSrc : `http://${fromSrc}`);
  } catch {
    throw invalid("not a URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw invalid(`the scheme is ${url.protocol.slice(0, -1)}`);
  if (!isRegistryDomain(url.host)) throw invalid(`"${url.host}" is not a host name`);
  return url;
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
  } catch (err) {
    // the client's tar (or the one at its URL) is not a layer: a 400 that says why
    throw clientArchiveError(err, errors.imageInvalidLayerArchive);
  } finally {
    await rm(tarFile, { force: true }); // on the thread pool: a long system call for a big file
  }
}
