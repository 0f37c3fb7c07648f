/**
 * Random bytes from the kernel's generator (/dev/urandom), for what the daemon makes at start:
 * the ids of the pre-defined networks and the daemon's own ID on a new data root, the names of
 * the temporary files of its first records. node:crypto would do the same, but its load (5 ms,
 * with OpenSSL's set-up) was the largest single item of a first start; later work (container
 * ids, digests) loads it when it needs it.
 */
import { closeSync, openSync, readSync } from "node:fs";

export function kernelRandomBytes(n: number): Buffer {
  const out = Buffer.alloc(n);
  const fd = openSync("/dev/urandom", "r");
  try {
    for (let got = 0; got < n; ) got += readSync(fd, out, got, n - got, null);
  } finally {
    closeSync(fd);
  }
  return out;
}

/** A random (version 4) UUID in its text form, as crypto.randomUUID makes it. */
export function kernelRandomUuid(): string {
  const b = kernelRandomBytes(16);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
