/**
 * The raw material of the API fuzz (test/api-fuzz.test.ts): a seeded random source, values a
 * client should not send (wrong types, huge, unicode, NUL bytes, negative and out-of-range
 * numbers, words that are not booleans, path traversal), JSON bent out of shape or broken, and
 * bytes cut or garbled. Everything is a function of the random source, so a seed repeats.
 */
import { gzipSync } from "node:zlib";

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(list: readonly T[]): T {
    return list[this.int(list.length)];
  }
  /** Calls one of the makers, chosen by weight. */
  weighted<T>(choices: readonly (readonly [number, () => T])[]): T {
    const total = choices.reduce((sum, [w]) => sum + w, 0);
    let at = this.next() * total;
    for (const [w, make] of choices) {
      if ((at -= w) < 0) return make();
    }
    return choices[choices.length - 1][1]();
  }
  hex(length: number): string {
    let out = "";
    while (out.length < length) out += this.int(16).toString(16);
    return out;
  }
}

/** The source of request `index` of a run: each request is made from its own, so one can be made again alone. */
export function requestRng(seed: number, index: number): Rng {
  let h = (seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return new Rng((h ^ (h >>> 16)) >>> 0);
}

/** Strings that break names, ids, paths and free text in every known way. */
export function weirdString(rng: Rng): string {
  return rng.weighted<string>([
    [3, () => rng.pick(["", " ", "a", "-", "_", ".", "..", "/", "//", ":", "@", "#", "?", "%", "*", "\\", "~", "'", '"', "`", "$(true)", "${HOME}"])],
    [2, () => rng.pick(["\u0000", "a\u0000b", "\u0000/etc/passwd", "\n", "\r\nX-Injected: 1", "\t", "\u007f", "\u001b[31m"])],
    [2, () => rng.pick(["ü", "名前", "😀", "\u202eevil", "\uffff", "\ufeffbom", "e\u0301", "Ａ", "ß", "İ"])],
    [3, () => rng.pick(["../../../../etc/passwd", "..%2f..%2fetc", "%2e%2e/%2e%2e", "/../../", "a/../../b", "./././", "\\..\\..\\x", "....//....//"])],
    [2, () => rng.pick(["-1", "0", "NaN", "true", "null", "{}", "[]", "undefined", "1e309"])],
    [2, () => rng.pick(["sha256:", `sha256:${"0".repeat(64)}`, "0".repeat(64), "f".repeat(12), "A".repeat(64), `sha256:${"g".repeat(64)}`, "sha512:abc"])],
    [1, () => "x".repeat(rng.pick([129, 256, 4097, 70_000]))],
    [1, () => String.fromCharCode(...Array.from({ length: 1 + rng.int(12) }, () => rng.int(0x3000)))],
  ]);
}

/** Text a query's number parameter might get. */
export function weirdNumber(rng: Rng): string {
  return rng.pick([
    "-1", "-0", "0", "1", "1.5", "-2.5", "1e3", "1e309", "-1e309", "9007199254740993", "18446744073709551616", "-9223372036854775809",
    "2147483648", "0x10", "0o7", "NaN", "Infinity", "-Infinity", " 1", "1 ", "+1", "٣", "１", "", "abc", "1abc", "99999999999999999999999",
  ]);
}

/** Text a query's boolean parameter might get. */
export function weirdBool(rng: Rng): string {
  return rng.pick(["1", "0", "true", "false", "yes", "no", "TRUE", "tru", "maybe", "2", "-1", "", "on", "off", "none", "\u0000", "truе"]);
}

/** A JSON value of any type, for where another type belongs. */
export function weirdJson(rng: Rng): unknown {
  return rng.weighted<unknown>([
    [3, () => rng.pick([null, true, false, 0, -1, 1.5, -0.5, 2 ** 53 + 2, -(2 ** 63), 2 ** 64, 1e308])],
    [3, () => weirdString(rng)],
    [2, () => rng.pick([[], {}, [null], [1, "a"], { "": "" }, { a: { b: { c: [] } } }])],
    [1, () => [weirdString(rng), weirdString(rng)]],
    [1, () => ({ [weirdString(rng)]: weirdString(rng) })],
    [2, () => rawJson(rng.pick(["1e400", "-1e400", "-0", "123456789012345678901234567890", "0.0000000000000000000000001", deepArray(rng.pick([64, 5000]))]))],
  ]);
}

const RAW = "\u0000raw:";
/** A placeholder that `jsonText` writes as the raw text (numbers JSON.stringify cannot write, deep nesting). */
export function rawJson(text: string): string {
  return `${RAW}${text}`;
}

function deepArray(depth: number): string {
  return `${"[".repeat(depth)}${"]".repeat(depth)}`;
}

/** JSON text of a value, with `rawJson` placeholders written as their text. */
export function jsonText(value: unknown): string {
  return JSON.stringify(value).replace(/"\\u0000raw:((?:[^"\\]|\\.)*)"/g, (_m, text: string) => JSON.parse(`"${text}"`) as string);
}

/**
 * The value with some of its parts replaced by values of other types or shapes, keys added or
 * dropped. Keys in `keep` (at any depth) are never dropped: their absence would change what
 * the request asks for (a login without a registry goes to Docker Hub).
 */
export function mutateJson(rng: Rng, value: unknown, rate: number, keep: readonly string[] = [], depth = 0): unknown {
  if (depth > 0 && rng.chance(rate)) return weirdJson(rng);
  if (Array.isArray(value)) {
    const out = value.map((v) => mutateJson(rng, v, rate, keep, depth + 1));
    if (rng.chance(rate)) out.push(weirdJson(rng));
    return out;
  }
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (!keep.includes(k) && rng.chance(rate / 2)) continue;
      out[k] = mutateJson(rng, v, rate, keep, depth + 1);
    }
    if (rng.chance(rate)) out[rng.chance(0.5) ? weirdString(rng) : rng.pick(["__proto__", "constructor", "prototype"])] = weirdJson(rng);
    return out;
  }
  return value;
}

/** JSON that does not parse, made from text that does. */
export function breakJson(rng: Rng, text: string): Buffer {
  const at = rng.int(text.length + 1);
  return rng.weighted<Buffer>([
    [3, () => Buffer.from(text.slice(0, at))],
    [2, () => Buffer.from(`${text.slice(0, at)}${rng.pick(["}", "]", ",", ":", '"', "'", "\\", "\u0000", "NaN", "//x\n", "/*"])}${text.slice(at)}`)],
    [1, () => Buffer.from(`\ufeff${text}`)],
    [1, () => Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from([0xff, 0xfe, 0xc0, 0x80]), Buffer.from(text.slice(at))])],
    [1, () => Buffer.from(text.replace(/"/g, "'"))],
    [1, () => Buffer.from(`${text}${rng.pick(["x", "{}", ",", "\n\n]", " garbage"])}`)],
    [1, () => Buffer.from(rng.pick(["", " ", "\n", "NaN", "undefined", "{", "[", "{,}", '{"a":1,}', '{"a" 1}', "{'a':1}", "nul", '"unterminated'])) ],
    [1, () => Buffer.from(`{"a":${"[".repeat(100_000)}`)],
  ]);
}

const MAGIC = {
  gzip: Buffer.from([0x1f, 0x8b, 0x08, 0x00]),
  bzip2: Buffer.from("BZh91AY&SY"),
  xz: Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]),
  zstd: Buffer.from([0x28, 0xb5, 0x2f, 0xfd]),
};

/** Random bytes. */
export function randomBytes(rng: Rng, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i++) out[i] = rng.int(256);
  return out;
}

/** Bytes that are not what the route reads: cut, garbled, compressed garbage, a compressor's magic and then nonsense. */
export function garbleBytes(rng: Rng, data: Buffer): Buffer {
  return rng.weighted<Buffer>([
    [3, () => data.subarray(0, rng.int(data.length))],
    [2, () => {
      const out = Buffer.from(data);
      for (let i = 0, n = 1 + rng.int(8); i < n && out.length > 0; i++) out[rng.int(out.length)] = rng.int(256);
      return out;
    }],
    [1, () => Buffer.concat([data, randomBytes(rng, 1 + rng.int(700))])],
    [1, () => Buffer.concat([randomBytes(rng, 1 + rng.int(600)), data])],
    [2, () => randomBytes(rng, rng.int(4096))],
    [1, () => Buffer.concat([rng.pick(Object.values(MAGIC)), randomBytes(rng, rng.int(2048))])],
    [1, () => gzipSync(data).subarray(0, rng.int(gzipSync(data).length))],
    [1, () => gzipSync(randomBytes(rng, rng.int(2048)))],
    [1, () => Buffer.alloc(rng.pick([0, 512, 1024, 10_240]))],
    [1, () => Buffer.from(rng.pick(["hello", "not a tar", "{]", "PK\u0003\u0004zip", "%PDF-1.4"]))],
  ]);
}

/**
 * A tar header field rewritten (and the header's checksum made right again, so that a reader
 * gets past it): a size far past the data, an unknown type, a name that climbs out.
 */
export function patchTarHeader(tar: Buffer, header: number, field: "name" | "mode" | "size" | "type" | "linkname" | "uid", value: string): Buffer {
  const at = { name: [0, 100], mode: [100, 8], uid: [108, 8], size: [124, 12], type: [156, 1], linkname: [157, 100] }[field];
  const out = Buffer.from(tar);
  const base = header * 512;
  if (base + 512 > out.length) return out;
  out.fill(0, base + at[0], base + at[0] + at[1]);
  out.write(value.slice(0, at[1]), base + at[0], "latin1");
  out.fill(0x20, base + 148, base + 156);
  let sum = 0;
  for (let i = base; i < base + 512; i++) sum += out[i];
  out.write(`${sum.toString(8).padStart(6, "0")}\0 `, base + 148, "latin1");
  return out;
}
