/**
 * The key sequence that detaches a client from a container's stdin (default ctrl-p,ctrl-q),
 * read as Docker reads it: comma-separated single characters or `ctrl-X` names. Both sides
 * watch for it: the client (`engine`, on a terminal) and the daemon (attach and exec streams,
 * for every client). The matcher sits on the input: bytes that may start the sequence are held
 * back until they turn out to be something else.
 */

export const DEFAULT_DETACH_KEYS = Buffer.from([16, 17]);

/** `ctrl-@` is 0, `ctrl-a` 1 ... `ctrl-z` 26, then `ctrl-[`, `ctrl-\`, `ctrl-]`, `ctrl-^`, `ctrl-_`. */
const CTRL_NAMES = ["@", ..."abcdefghijklmnopqrstuvwxyz", "[", "\\", "]", "^", "_"].map((c) => `ctrl-${c}`);

export function parseDetachKeys(spec: string): Buffer {
  const codes: number[] = [];
  for (const key of spec.split(",")) {
    if (key.length === 1) {
      codes.push(key.charCodeAt(0));
      continue;
    }
    const code = CTRL_NAMES.indexOf(key.toLowerCase());
    if (code < 0) throw new Error(`Unknown character: '${key}'`);
    codes.push(code);
  }
  return Buffer.from(codes);
}

export class DetachMatcher {
  private held = 0;

  constructor(private readonly keys: Buffer) {}

  /** What to pass on of `chunk`, and whether the whole sequence has now been typed. */
  feed(chunk: Buffer): { pass: Buffer; detach: boolean } {
    if (this.keys.length === 0) return { pass: chunk, detach: false };
    const out: number[] = [];
    for (const byte of chunk) {
      if (byte !== this.keys[this.held] && this.held > 0) {
        // not the sequence after all: what was held goes through, and this byte may start it anew
        out.push(...this.keys.subarray(0, this.held));
        this.held = 0;
      }
      if (byte !== this.keys[this.held]) {
        out.push(byte);
        continue;
      }
      this.held++;
      if (this.held === this.keys.length) return { pass: Buffer.from(out), detach: true };
    }
    return { pass: Buffer.from(out), detach: false };
  }
}
