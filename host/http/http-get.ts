/**
 * A GET as Go's http client makes one for Docker's daemon (`ADD <url>`, a remote build context),
 * answered as a WHATWG Response: redirects followed (ten, Go's default), to any port.
 *
 * Not fetch(): the Fetch standard refuses the "bad ports" of browsers (1, 25, 6000, 6665-6669,
 * 10080, ...: "bad port"), which Docker's daemon downloads from like any other.
 */
import { STATUS_CODES } from "node:http";
import { Readable } from "node:stream";
import type { Dispatcher } from "undici";
import { undici } from "./undici.js";

const dispatchers = new Map<number, Dispatcher>();

/** An agent that follows up to `redirects` redirects (one per count, made once). */
export function redirectingDispatcher(redirects: number): Dispatcher {
  let d = dispatchers.get(redirects);
  if (!d) {
    d = new (undici().Agent)().compose(undici().interceptors.redirect({ maxRedirections: redirects }));
    dispatchers.set(redirects, d);
  }
  return d;
}

/**
 * The answer's body as a web stream, read as it is pulled; cancelled, the body is destroyed.
 * (Not Readable.toWeb: its adapter throws, uncaught, when the body sends data after a cancel.)
 */
function webBody(body: Readable): ReadableStream<Uint8Array> {
  const chunks = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await chunks.next();
      if (done) controller.close();
      else controller.enqueue(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
    },
    cancel() {
      body.destroy();
    },
  });
}

export async function httpGet(url: string | URL, opts: { signal?: AbortSignal; headers?: Record<string, string>; redirects?: number } = {}): Promise<Response> {
  const res = await undici().request(url, { method: "GET", headers: opts.headers, signal: opts.signal, dispatcher: redirectingDispatcher(opts.redirects ?? 10) });
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, String(v));
  }
  const status = res.statusCode;
  // a Response has no body for these (undici answers final statuses only: 200 and above)
  const bodiless = status === 204 || status === 205 || status === 304;
  if (bodiless) await res.body.dump();
  return new Response(bodiless ? null : webBody(res.body), {
    status,
    statusText: STATUS_CODES[status] ?? "",
    headers,
  });
}
