/**
 * The zlib dictionary of SPDY/3 header blocks (draft 3, section 2.6.10.1): both ends prime their
 * compressors with it, so it must be byte for byte the draft's. It is written here the way the
 * draft builds it: header names and common words, each after its length (32 bits, big endian),
 * then common values as one run of text. Its length, 1423 bytes, is checked at load.
 */
const WORDS = [
  "options", "head", "post", "put", "delete", "trace", "accept", "accept-charset", "accept-encoding", "accept-language",
  "accept-ranges", "age", "allow", "authorization", "cache-control", "connection", "content-base", "content-encoding",
  "content-language", "content-length", "content-location", "content-md5", "content-range", "content-type", "date", "etag",
  "expect", "expires", "from", "host", "if-match", "if-modified-since", "if-none-match", "if-range", "if-unmodified-since",
  "last-modified", "location", "max-forwards", "pragma", "proxy-authenticate", "proxy-authorization", "range", "referer",
  "retry-after", "server", "te", "trailer", "transfer-encoding", "upgrade", "user-agent", "vary", "via", "warning",
  "www-authenticate", "method", "get", "status", "200 OK", "version", "HTTP/1.1", "url", "public", "set-cookie", "keep-alive",
  "origin",
];

const TAIL =
  "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505" +
  "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized" +
  "403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable" +
  "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT" +
  "chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain," +
  "text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.";

function build(): Buffer {
  const parts: Buffer[] = [];
  for (const w of WORDS) {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(w.length);
    parts.push(len, Buffer.from(w, "latin1"));
  }
  parts.push(Buffer.from(TAIL, "latin1"));
  const dict = Buffer.concat(parts);
  if (dict.length !== 1423) throw new Error(`SPDY/3 dictionary: built ${dict.length} bytes, the draft's has 1423`);
  return dict;
}

export const SPDY3_DICTIONARY = build();
