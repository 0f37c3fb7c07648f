/**
 * The local driver's options, as Docker's local driver reads them: `type`, `device` and `o`
 * go to mount(8) (`mount -t <type> -o <o> <device> <_data>`), each of `type` and `device`
 * needs the other and `o` needs both; `size` asks for a quota, which this driver has not.
 */

export interface LocalMountOptions {
  type: string;
  device: string;
  o: string;
}

const KNOWN = ["type", "device", "o", "size"];
const REQUIRES: Record<string, string[]> = { device: ["type"], type: ["device"], o: ["device", "type"] };

/** Throws an Error naming the first unknown, incomplete or unsupported option. */
export function validateLocalOptions(options: Record<string, string>): void {
  for (const key of Object.keys(options)) {
    if (!KNOWN.includes(key)) throw new Error(`invalid option: ${JSON.stringify(key)}`);
  }
  for (const [key, needs] of Object.entries(REQUIRES)) {
    if (!(key in options)) continue;
    for (const need of needs) if (!(need in options)) throw new Error(`missing required option: ${JSON.stringify(need)}`);
  }
  if ("size" in options) {
    if (!/^\d+(\.\d+)?\s*([kmgtp]i?b?|b)?$/i.test(options.size.trim())) throw new Error(`invalid size: ${JSON.stringify(options.size)}`);
    if (parseFloat(options.size) > 0) throw new Error("quota size requested but no quota support");
  }
  if (options.type !== undefined && !/^[a-z0-9._-]+$/i.test(options.type)) throw new Error(`invalid option "type": ${JSON.stringify(options.type)} is not a filesystem type`);
  if (options.device !== undefined && options.device === "") throw new Error('invalid option "device": it must not be empty');
  if (/\bbind\b/.test(options.o ?? "") && !options.device.startsWith("/")) {
    throw new Error(`invalid option "device": a bind (o=bind) needs an absolute host path, not ${JSON.stringify(options.device)}`);
  }
}

/** The mount the options ask for, or undefined for a plain folder. */
export function mountOptionsOf(options: Record<string, string>): LocalMountOptions | undefined {
  if (options.type === undefined && options.device === undefined) return undefined;
  return { type: options.type ?? "", device: options.device ?? "", o: options.o ?? "" };
}
