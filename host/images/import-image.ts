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
import type { Platform } from "../registry/manifests.js";
import { ENGINE_VERSION } from "../../core/version.js";
import { STATUS_CODES } from "node:http";

export interface ImportOptions {
  source: Readable;
  /** `-` or the URL the tar came from, for the history's comment. */
  from: string;
  tags: string[];
  message?: string;
  changes: string[];
  disablePigz: boolean;
  /** The image's platform: the request's `platform=`, else the host's (Docker's default spec). */
  platform: Platform;
}

/** How much of a refusing answer's body goes into the message (Docker reads it all; this bounds it). */
const ANSWER_BODY_LIMIT = 64 * 1024;

/**
 * Docker's refusal of an import for another OS (its image.CheckOS, before the layer is read):
 * the image could never run here.
 */
export function checkImportPlatform(platform: Platform): void {
  if (platform.os.toLowerCase() !== "linux") throw errors.imageOsNotSupported();
}

export async function openImportSource(fromSrc: string, body: Readable): Promise<Readable> {
  if (fromSrc === "-") return body;
  const url = importUrl(fromSrc);
  const res = await undici()
    // (up to five redirects, as Docker's import follows)
    .request(url, { method: "GET", dispatcher: redirectingDispatcher(5) })
    .catch((err: unknown) => {
      throw errors.imageImportDownloadFailed(url.href, goDialError(err) ?? (err as Error).message);
    });
  if (res.statusCode >= 400) throw await refusal(url.href, res.statusCode, res.body);
  return res.body as unknown as Readable;
}

/**
 * A URL that answered 400 or more, as Docker's daemon tells it (remotecontext.GetWithStatusError):
 * the status and the answer's body in the message, and 404, 400, 401 and 403 passed on as they
 * are (a missing file is the client's "not found"); any other status is a 500, as Docker's.
 */
async function refusal(url: string, status: number, body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<Error> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= ANSWER_BODY_LIMIT) {
      body.destroy();
      break;
    }
  }
  const text = Buffer.concat(chunks).subarray(0, ANSWER_BODY_LIMIT).toString("utf8").trim();
  const message = `failed to GET ${url} with status ${status} ${STATUS_CODES[status] ?? ""}`.trimEnd() + `: ${text}`;
  if (status === 404) return errors.imageImportSourceNotFound(message);
  if (status === 400) return errors.imageImportSourceRefused(message);
  if (status === 401) return errors.imageImportSourceUnauthorized(message);
  if (status === 403) return errors.imageImportSourceForbidden(message);
  return errors.imageImportSourceFailed(message);
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
      architecture: opts.platform.architecture,
      ...(opts.platform.variant ? { variant: opts.platform.variant } : {}),
      os: opts.platform.os,
      created: now,
      docker_version: ENGINE_VERSION,
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
