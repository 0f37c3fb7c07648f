/**
 * `ADD <url>`: the file is downloaded as Docker's builder downloads it: into a file named by the
 * URL's last path element, mode 0600, its time the `Last-Modified` the server gave (else the
 * Unix epoch, where Docker's zero time lands).
 * A download is bounded in time; a failure names the URL. An archive from a URL is not unpacked.
 */
import { createWriteStream, mkdtempSync, rmSync, utimesSync } from "node:fs";
import { join, posix } from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { errors } from "../../core/errors.js";
import { goDialError } from "../../core/net/go-dial-error.js";
import { httpGet } from "../http/http-get.js";

const TIMEOUT_MS = 10 * 60_000;
/** How many bytes of an error answer's body the message quotes (Docker quotes it all: a server could send much). */
const ERROR_BODY_CHARS = 4096;

export const isUrl = (s: string): boolean => /^https?:\/\//i.test(s);

/**
 * The file's name: the URL path's last element (Docker's rule). A URL whose path ends with `/`
 * is refused here; Docker 20.10 takes it and writes the answer at the destination's own name.
 */
function fileName(url: URL): string {
  const base = posix.basename(url.pathname);
  if (!base || base === "/") throw errors.buildAddUrlFailed(`cannot download ${url.href}: cannot determine filename from url`);
  return decodeURIComponent(base);
}

/**
 * Downloads `href` into a new folder under `tmpDir`; the file's path. `onProgress` hears the
 * bytes so far and the size the server announced (-1 when it said none), and the end (`last`).
 */
export async function download(href: string, tmpDir: string, signal: AbortSignal, onProgress?: (current: number, total: number, last: boolean) => void): Promise<string> {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    throw errors.buildAddUrlFailed(`cannot download ${href}: not a valid URL`);
  }
  const name = fileName(url);
  const dir = mkdtempSync(join(tmpDir, "add-"));
  const file = join(dir, name);
  try {
    let res: Response;
    try {
      res = await httpGet(url, { signal: AbortSignal.any([signal, AbortSignal.timeout(TIMEOUT_MS)]) });
    } catch (err) {
      // Go's words for a request that got no answer, as Docker's message carries them
      throw errors.buildAddUrlFailed(`Get "${href}": ${goDialError(err) ?? ((err as Error).cause as Error | undefined)?.message ?? (err as Error).message}`);
    }
    if (!res.ok || !res.body) throw errors.buildAddUrlFailed(`failed to GET ${href} with status ${res.status} ${res.statusText}: ${await errorBody(res)}`);
    const total = Number(res.headers.get("content-length") ?? -1);
    let current = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        current += chunk.length;
        onProgress?.(current, total, false);
        done(null, chunk);
      },
    });
    await pipeline(Readable.fromWeb(res.body as Parameters<typeof Readable.fromWeb>[0]), counter, createWriteStream(file, { mode: 0o600 }));
    onProgress?.(current, total, true);
    // without a Last-Modified Docker sets Go's zero time, which lands on the Unix epoch
    const modified = Date.parse(res.headers.get("last-modified") ?? "");
    const time = Number.isNaN(modified) ? new Date(0) : new Date(modified);
    utimesSync(file, time, time);
    return file;
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** The start of an error answer's body, trimmed, as Docker quotes it. */
async function errorBody(res: Response): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let length = 0;
  try {
    while (length < ERROR_BODY_CHARS) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      length += value.length;
    }
  } catch {
    // the status says enough
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).subarray(0, ERROR_BODY_CHARS).toString("utf8").trim();
}
