/**
 * `ADD <url>`: the file is downloaded as Docker's builder downloads it: into a file named by the
 * URL's last path element, mode 0600, its time the `Last-Modified` the server gave (else now).
 * A download is bounded in time; a failure names the URL. An archive from a URL is not unpacked.
 */
import { createWriteStream, mkdtempSync, utimesSync } from "node:fs";
import { join, posix } from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { errors } from "../../core/errors.js";

const TIMEOUT_MS = 10 * 60_000;

export const isUrl = (s: string): boolean => /^https?:\/\//i.test(s);

/** The file's name: the URL path's last element (Docker's `filename` rule), else "index.html"? Docker refuses: so does this. */
function fileName(url: URL): string {
  const base = posix.basename(url.pathname);
  if (!base || base === "/") throw errors.buildAddUrlFailed(url.href, "cannot determine filename from url");
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
    throw errors.buildAddUrlFailed(href, "not a valid URL");
  }
  const name = fileName(url);
  const dir = mkdtempSync(join(tmpDir, "add-"));
  const file = join(dir, name);
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.any([signal, AbortSignal.timeout(TIMEOUT_MS)]), redirect: "follow" });
  } catch (err) {
    throw errors.buildAddUrlFailed(href, ((err as Error).cause as Error | undefined)?.message ?? (err as Error).message);
  }
  if (!res.ok || !res.body) throw errors.buildAddUrlFailed(href, `${res.status} ${res.statusText}`);
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
  const modified = Date.parse(res.headers.get("last-modified") ?? "");
  if (!Number.isNaN(modified)) utimesSync(file, new Date(modified), new Date(modified));
  return file;
}
