/**
 * What Docker's daemon says of a request body that is no JSON. Its routes read a body with Go's
 * json.Decoder (httputils.ReadJSON): one value is decoded, and what follows it is "more" only
 * when it is not whitespace, `]` or `}` (Decoder.More). So the answer depends on where Go's
 * scanner stops, not on where JSON.parse does, and its words are Go's ("invalid character 'i'
 * looking for beginning of object key string"); clients and moby's own tests look for them.
 *
 * `readGoJson` scans the bytes as Go's scanner does (encoding/json's grammar and its error for
 * each state), and answers the end of the first value, or the message Docker sends.
 */

export type GoJsonRead = { end: number } | { error: string };

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

/** Go's quoteChar: the byte as a rune, in single quotes, escaped as strconv.Quote escapes it. */
function quoteChar(c: number): string {
  if (c === 0x27) return "'\\''";
  if (c === 0x22) return "'\"'";
  const named: Record<number, string> = { 7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r", 0x5c: "\\\\" };
  if (named[c]) return `'${named[c]}'`;
  if (c < 0x20 || c === 0x7f) return `'\\x${c.toString(16).padStart(2, "0")}'`;
  // a byte of 0x80 and above is read as the rune of that number (Latin-1); its C1 controls
  // and the no-break space are not printable to Go
  if (c >= 0x80 && c <= 0xa0) return `'\\u${c.toString(16).padStart(4, "0")}'`;
  if (c === 0xad) return "'\\u00ad'";
  return `'${String.fromCharCode(c)}'`;
}

class SyntaxFault extends Error {}

/** The first JSON value of `buf` as Go's Decoder reads it, and whether more follows. */
export function readGoJson(buf: Uint8Array): GoJsonRead {
  let i = 0;
  const fail = (context: string): never => {
    throw new SyntaxFault(`invalid character ${quoteChar(buf[i]!)} ${context}`);
  };
  const eof = () => i >= buf.length;
  const skipSpace = () => {
    while (!eof() && isSpace(buf[i]!)) i++;
  };
  // an input that ends inside a value is Go's io.ErrUnexpectedEOF
  const need = () => {
    if (eof()) throw new SyntaxFault("unexpected EOF");
    return buf[i]!;
  };

  const literal = (word: string) => {
    for (let k = 1; k < word.length; k++) {
      i++;
      if (need() !== word.charCodeAt(k)) fail(`in literal ${word} (expecting ${quoteChar(word.charCodeAt(k))})`);
    }
    i++;
  };
  const digits = () => {
    while (!eof() && isDigit(buf[i]!)) i++;
  };
  // a number's end is known from the byte after it; at the input's end it is complete
  const number = () => {
    if (buf[i] === 0x2d) {
      i++;
      if (!isDigit(need())) fail("in numeric literal");
    }
    if (buf[i] === 0x30) i++;
    else digits();
    if (!eof() && buf[i] === 0x2e) {
      i++;
      if (!isDigit(need())) fail("after decimal point in numeric literal");
      digits();
    }
    if (!eof() && (buf[i] === 0x65 || buf[i] === 0x45)) {
      i++;
      if (need() === 0x2b || buf[i] === 0x2d) i++;
      if (!isDigit(need())) fail("in exponent of numeric literal");
      digits();
    }
  };
  const string = () => {
    i++;
    for (;;) {
      const c = need();
      if (c === 0x22) return void i++;
      if (c === 0x5c) {
        i++;
        const e = need();
        if (e === 0x75) {
          for (let k = 0; k < 4; k++) {
            i++;
            if (!isHex(need())) fail("in \\u hexadecimal character escape");
          }
        } else if (!'bfnrt\\/"'.includes(String.fromCharCode(e))) fail("in string escape code");
      } else if (c < 0x20) fail("in string literal");
      i++;
    }
  };
  // one value, its containers kept on a stack (no recursion: a body may nest deeply)
  const value = (): void => {
    const open: number[] = []; // 0x7b for an object, 0x5b for an array
    for (;;) {
      skipSpace();
      const c = need();
      if (c === 0x7b || c === 0x5b) {
        if (open.length >= 10000) throw new SyntaxFault("exceeded max depth");
        i++;
        skipSpace();
        // an empty one is a whole value; otherwise its first key or element comes next
        if (need() === (c === 0x7b ? 0x7d : 0x5d)) i++;
        else {
          open.push(c);
          if (c === 0x7b) key();
          continue;
        }
      } else if (c === 0x22) string();
      else if (c === 0x2d || isDigit(c)) number();
      else if (c === 0x74) literal("true");
      else if (c === 0x66) literal("false");
      else if (c === 0x6e) literal("null");
      else fail("looking for beginning of value");
      // after a value: the next element or key, or the end of its container (and of those it ends)
      for (;;) {
        const inside = open.at(-1);
        if (inside === undefined) return;
        skipSpace();
        const next = need();
        if (next === (inside === 0x7b ? 0x7d : 0x5d)) {
          i++;
          open.pop();
          continue;
        }
        if (next !== 0x2c) fail(inside === 0x7b ? "after object key:value pair" : "after array element");
        i++;
        if (inside === 0x7b) key();
        break;
      }
    }
  };
  // an object's key and its colon
  const key = () => {
    skipSpace();
    if (need() !== 0x22) fail("looking for beginning of object key string");
    string();
    skipSpace();
    if (need() !== 0x3a) fail("after object key");
    i++;
  };

  skipSpace();
  if (eof()) return { error: "invalid JSON: got EOF while reading request body" };
  try {
    value();
  } catch (err) {
    if (err instanceof SyntaxFault) return { error: `invalid JSON: ${err.message}` };
    throw err;
  }
  const end = i;
  skipSpace();
  if (!eof() && buf[i] !== 0x5d && buf[i] !== 0x7d) return { error: "unexpected content after JSON" };
  return { end };
}
