/**
 * Response header names as Go's net/http writes them (its CanonicalMIMEHeaderKey: each word
 * between dashes capitalised, `Api-Version`, `Ostype`, `Content-Type`). Fastify keeps the
 * names it is given lower-cased and Node writes them as it gets them; HTTP names are
 * case-insensitive, but a client that reads the raw head (a test splitting lines, a proxy
 * matching bytes) sees Docker's daemon's spelling.
 */
import type { OutgoingHttpHeaders, ServerResponse } from "node:http";

/** Go's canonical form; a name with a byte Go would not touch (a space, `_` is kept) is left as it is. */
export function canonicalHeaderName(name: string): string {
  if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) return name;
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
}

export function canonicalHeaders(headers: OutgoingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) out[canonicalHeaderName(name)] = value;
  return out;
}

/** Makes `res.writeHead` write its header object's names in the canonical form. */
export function canonicalWriteHead(res: ServerResponse): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, status: number, ...rest: unknown[]) {
    const i = typeof rest[0] === "string" ? 1 : 0;
    const headers = rest[i];
    if (headers && typeof headers === "object" && !Array.isArray(headers)) rest[i] = canonicalHeaders(headers as OutgoingHttpHeaders);
    return (writeHead as (...args: unknown[]) => ServerResponse).call(this, status, ...rest);
  } as ServerResponse["writeHead"];
}
