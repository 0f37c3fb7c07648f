/**
 * A stand-in for journald where none runs (no systemd on these machines): a unix datagram
 * socket that parses the native protocol as journald-native.c does and fails where it fails.
 * - Each datagram is one entry; each field is `NAME=value\n`, or `NAME\n` + a 64-bit
 *   little-endian length + the bytes + `\n`.
 * - A binary field whose length runs past the datagram, or whose bytes are not followed by
 *   `\n`, ends the parse ("Failed to parse message, ignoring"): the fake records a `malformed`
 *   fault and, like journald, keeps none of that entry.
 * - A field whose name journald refuses (see checkFieldName) is dropped: recorded in `dropped`.
 * - A field line without `=` and without room for a length is malformed too.
 * Tests assert on `entries` and that `malformed` and `dropped` stay empty.
 */
import { DgramSocket } from "node-unix-socket";
import { checkFieldName } from "../plugins/log-journald/protocol.js";

export type Entry = Map<string, string[]>;

export interface FakeJournal {
  entries: Entry[];
  malformed: string[];
  dropped: string[];
  close(): void;
}

/** Parses one datagram; throws for what journald would not store. */
export function parseEntry(buf: Buffer, dropped: string[] = []): Entry {
  const entry: Entry = new Map();
  let p = 0;
  while (p < buf.length) {
    const nl = buf.indexOf(0x0a, p);
    if (nl < 0) throw new Error(`a field without its newline at byte ${p}`);
    const line = buf.subarray(p, nl);
    let name: string;
    let value: Buffer;
    const eq = line.indexOf(0x3d);
    if (eq >= 0) {
      name = line.subarray(0, eq).toString("latin1");
      value = line.subarray(eq + 1);
      p = nl + 1;
    } else {
      name = line.toString("latin1");
      if (buf.length - (nl + 1) < 8 + 1) throw new Error(`binary field ${name}: no room for its length`);
      const len = buf.readBigUInt64LE(nl + 1);
      const start = nl + 1 + 8;
      if (BigInt(buf.length - start) < len + 1n || buf[start + Number(len)] !== 0x0a) throw new Error(`binary field ${name}: length ${len} does not match its bytes`);
      value = buf.subarray(start, start + Number(len));
      p = start + Number(len) + 1;
    }
    const why = checkFieldName(name);
    if (why) {
      dropped.push(`${name}: ${why}`);
      continue;
    }
    const values = entry.get(name) ?? [];
    values.push(value.toString("utf8"));
    entry.set(name, values);
  }
  return entry;
}

export function startFakeJournal(path: string): FakeJournal {
  const sock = new DgramSocket();
  sock.bind(path);
  const journal: FakeJournal = { entries: [], malformed: [], dropped: [], close: () => sock.close() };
  sock.on("data", (buf: Buffer) => {
    try {
      journal.entries.push(parseEntry(buf, journal.dropped));
    } catch (err) {
      journal.malformed.push((err as Error).message);
    }
  });
  return journal;
}
