/**
 * A remote context over http(s) (`remote=https://host/ctx.tar.gz`), fetched as Docker's daemon
 * fetches it (builder/remotecontext/remote.go): a GET, redirects followed; a status of 400 or
 * more is an error that quotes the server's answer, with Docker's status for 404, 401 and 403;
 * then what the body is comes from its Content-Type and first bytes (content-sniff.ts): a
 * Dockerfile alone, read whole, or a tar, handed on as a stream while it downloads.
 *
 * Bounded, unlike Docker's: the whole download has a time limit and a size limit, each an error
 * naming the URL; so does a connection that fails. Errors name the URL with any password in it
 * hidden. The caller's signal (the client went away) stops it all and is thrown as it is.
 */
import { Readable } from "node:stream";
import { errors, EngineError } from "../../../core/errors.js";
import { goDialError } from "../../../core/net/go-dial-error.js";
import { httpGet } from "../../http/http-get.js";
import { PREAMBLE_BYTES, remoteContentKind } from "./content-sniff.js";
import { MAX_CONTEXT_FILE_BYTES } from "./context-files.js";
import { redactURL } from "./remote-kind.js";

export interface DownloadOptions {
  /** The largest body taken, in bytes. */
  maxBytes: number;
  /** The time the whole download may take, headers to the last byte, in ms. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Bytes received so far and the length announced (if any); at most every 100 ms, and at the end. */
  onProgress?: (bytes: number, total: number | undefined) => void;
}

export type RemoteBody = { kind: "dockerfile"; text: string } | { kind: "archive"; stream: Readable };

/** The bytes of an error answer quoted in the message. */
const ERROR_BODY_BYTES = 4096;
const PROGRESS_INTERVAL_MS = 100;

/** Starts the download of `url` and tells what it is (see the file's comment). */
export async function downloadRemote(url: string, opts: DownloadOptions): Promise<RemoteBody> {
  const shown = redactURL(url);
  const deadline = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
  /** A failure of the transfer as the client is told it. */
  const failed = (e: unknown): unknown => {
    if (opts.signal?.aborted) return opts.signal.reason;
    if (e instanceof EngineError) return e;
    if (deadline.aborted) return errors.contextDownloadFailed(shown, `no complete answer within ${opts.timeoutMs / 1000} s`);
    const cause = ((e as Error).cause ?? e) as NodeJS.ErrnoException;
    const why = `Get "${shown}": ${goDialError(e) ?? cause.message ?? String(cause)}`;
    // an unknown host is Docker's 404 (a DNS error that is not a timeout)
    if (cause.code === "ENOTFOUND") return errors.contextDownloadNotFound(shown, why);
    return errors.contextDownloadFailed(shown, why);
  };
  let res: Response;
  try {
    const { href, headers } = withoutUserInfo(url);
    res = await httpGet(href, { signal, headers });
  } catch (e) {
    throw failed(e);
  }
  const body = res.body?.[Symbol.asyncIterator]() ?? emptyBody();
  const counter = new Counter(opts, Number(res.headers.get("content-length") ?? "") || undefined);
  try {
    if (res.status >= 400) throw await statusError(res, body, shown);
    const preamble = await readUpTo(body, PREAMBLE_BYTES, counter, shown);
    const kind = remoteContentKind(res.headers.get("content-type") ?? "", preamble.subarray(0, PREAMBLE_BYTES));
    if ("refused" in kind) throw errors.contextContentType(shown, kind.refused);
    if (kind.kind === "dockerfile") {
      const text = await readUpTo(body, Infinity, counter.limit(Math.min(opts.maxBytes, MAX_CONTEXT_FILE_BYTES)), shown, preamble);
      counter.done();
      return { kind: "dockerfile", text: text.toString("utf8") };
    }
    return { kind: "archive", stream: Readable.from(rest(preamble, body, counter, shown, failed), { objectMode: false }) };
  } catch (e) {
    await closeBody(body);
    throw failed(e);
  }
}

/**
 * `url` without its user info, which becomes a Basic authorization header (as Go's client
 * sends it; a URL that holds credentials would carry them into error messages).
 */
function withoutUserInfo(url: string): { href: string; headers: Record<string, string> } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { href: url, headers: {} }; // fetch tells what is wrong with it
  }
  if (u.username === "" && u.password === "") return { href: url, headers: {} };
  const credentials = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
  u.username = u.password = "";
  return { href: u.href, headers: { authorization: `Basic ${Buffer.from(credentials).toString("base64")}` } };
}

/** Counts what arrives, against the size limit, and reports progress now and then. */
class Counter {
  bytes = 0;
  private max: number;
  private last = 0;

  constructor(
    private readonly opts: DownloadOptions,
    private readonly total: number | undefined,
  ) {
    this.max = opts.maxBytes;
  }

  limit(max: number): this {
    this.max = max;
    return this;
  }

  add(n: number, shown: string): void {
    this.bytes += n;
    if (this.bytes > this.max) throw errors.contextDownloadFailed(shown, `larger than the limit of ${this.max} bytes`);
    const now = Date.now();
    if (now - this.last >= PROGRESS_INTERVAL_MS) {
      this.last = now;
      this.opts.onProgress?.(this.bytes, this.total);
    }
  }

  done(): void {
    this.opts.onProgress?.(this.bytes, this.total);
  }
}

/** Reads until `n` bytes are there or the body ends; `have` is what was read before. */
async function readUpTo(body: AsyncIterator<Uint8Array>, n: number, counter: Counter, shown: string, have?: Buffer): Promise<Buffer> {
  const chunks: Buffer[] = have ? [have] : [];
  let length = have?.length ?? 0;
  while (length < n) {
    const next = await body.next();
    if (next.done) break;
    counter.add(next.value.length, shown);
    chunks.push(Buffer.from(next.value.buffer, next.value.byteOffset, next.value.length));
    length += next.value.length;
  }
  return Buffer.concat(chunks);
}

/** The whole body of an archive, from the bytes already read on. */
async function* rest(first: Buffer, body: AsyncIterator<Uint8Array>, counter: Counter, shown: string, failed: (e: unknown) => unknown): AsyncGenerator<Buffer> {
  let ended = false;
  try {
    if (first.length > 0) yield first;
    for (;;) {
      let next: IteratorResult<Uint8Array>;
      try {
        next = await body.next();
      } catch (e) {
        throw failed(e);
      }
      if (next.done) break;
      counter.add(next.value.length, shown);
      yield Buffer.from(next.value.buffer, next.value.byteOffset, next.value.length);
    }
    ended = true;
    counter.done();
  } finally {
    if (!ended) await closeBody(body); // the reader stopped early, or the limit was passed
  }
}

/** Docker's error for an answer of 400 or more: the status, and the server's answer quoted. */
async function statusError(res: Response, body: AsyncIterator<Uint8Array>, shown: string): Promise<EngineError> {
  let text = "";
  try {
    const chunks: Buffer[] = [];
    let length = 0;
    while (length < ERROR_BODY_BYTES) {
      const next = await body.next();
      if (next.done) break;
      chunks.push(Buffer.from(next.value));
      length += next.value.length;
    }
    text = Buffer.concat(chunks).subarray(0, ERROR_BODY_BYTES).toString("utf8").trim();
  } catch {
    // the answer's status says enough
  }
  const why = `failed to GET ${shown} with status ${res.status} ${res.statusText}: ${text}`;
  if (res.status === 404) return errors.contextDownloadNotFound(shown, why);
  if (res.status === 401) return errors.contextDownloadUnauthorized(shown, why);
  if (res.status === 403) return errors.contextDownloadForbidden(shown, why);
  return errors.contextDownloadFailed(shown, why);
}

/** Stops a body that is not read to its end (its connection is let go). */
async function closeBody(body: AsyncIterator<Uint8Array>): Promise<void> {
  try {
    await body.return?.();
  } catch {
    // already failed: nothing more to stop
  }
}

async function* emptyGenerator(): AsyncGenerator<Uint8Array> {}
const emptyBody = (): AsyncIterator<Uint8Array> => emptyGenerator();
