/**
 * Why this file: journald's native protocol, the encoding both the driver and the test's fake
 * journal depend on. A datagram on /run/systemd/journal/socket holds one entry, one field per
 * line: `NAME=value\n`, or, when the value holds a newline (or is binary), `NAME\n`, its length
 * as a 64-bit little-endian integer, the bytes and `\n`. This is what Docker's library
 * (go-systemd's journal.Send) writes.
 *
 * A field name journald keeps is 1-64 characters of A-Z, 0-9 and `_`, not starting with a
 * digit or (for a client) `_`. Like go-systemd, the driver sends a bad name anyway, and
 * journald drops that field; `checkFieldName` says why, for the fake.
 */

/** The fields of one entry, in the order they are sent. */
export type JournalFields = [name: string, value: Buffer | string][];

export function encodeEntry(fields: JournalFields): Buffer {
  const parts: Buffer[] = [];
  for (const [name, raw] of fields) {
    const value = typeof raw === "string" ? Buffer.from(raw) : raw;
    if (value.includes(0x0a)) {
      const len = Buffer.alloc(8);
      len.writeBigUInt64LE(BigInt(value.length));
      parts.push(Buffer.from(`${name}\n`), len, value, Buffer.from("\n"));
    } else {
      parts.push(Buffer.from(`${name}=`), value, Buffer.from("\n"));
    }
  }
  return Buffer.concat(parts);
}

/** Why journald would drop a field of this name, or undefined when it keeps it. */
export function checkFieldName(name: string): string | undefined {
  if (name.length === 0) return "empty field name";
  if (name.length > 64) return "field name longer than 64 characters";
  if (name.startsWith("_")) return "field name starts with an underscore (trusted fields are journald's own)";
  if (/^[0-9]/.test(name)) return "field name starts with a digit";
  if (!/^[A-Z0-9_]+$/.test(name)) return "field name has characters other than A-Z, 0-9 and _";
  return undefined;
}

/** Docker's key sanitizer for label and env attributes (`sanitizeKeyMod`). */
export function sanitizeKey(key: string): string {
  let out = "";
  for (const ch of key) {
    let c = ch;
    if (c >= "a" && c <= "z") c = c.toUpperCase();
    else if (!((c >= "A" && c <= "Z") || (c >= "0" && c <= "9"))) c = "_";
    if (!(out === "" && c === "_")) out += c;
  }
  return out;
}
