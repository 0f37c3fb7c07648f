/**
 * A failed mount of a volume with options (`-o type=... -o device=... -o o=...`), said as Docker's
 * local driver says it: `failed to mount local volume: mount <device>:<target>[, flags: 0x..][,
 * data: ...]: <errno in Go's words>` (moby/sys/mount's error, its options split into the
 * mount(2) flags and the data string as its ParseOptions splits them). The mount itself is
 * mount(8)'s (Node has no mount(2)); the errno is read back from what mount(8) says.
 */

/** mount(8) options that are mount(2) flags (set, or cleared: value 0), as moby/sys/mount knows them. */
const FLAGS: Record<string, number> = {
  defaults: 0, ro: 0x1, rw: 0, suid: 0, nosuid: 0x2, dev: 0, nodev: 0x4, exec: 0, noexec: 0x8,
  sync: 0x10, async: 0, dirsync: 0x80, remount: 0x20, mand: 0x40, nomand: 0, atime: 0, noatime: 0x400,
  diratime: 0, nodiratime: 0x800, bind: 0x1000, rbind: 0x5000, unbindable: 0x20000, runbindable: 0x24000,
  private: 0x40000, rprivate: 0x44000, shared: 0x100000, rshared: 0x104000, slave: 0x80000, rslave: 0x84000,
  relatime: 0x200000, norelatime: 0, strictatime: 0x1000000, nostrictatime: 0,
};

/** The mount(2) flags and the data string of `o`, as moby/sys/mount's ParseOptions splits them. */
export function splitMountOptions(o: string): { flags: number; data: string } {
  let flags = 0;
  const data: string[] = [];
  for (const opt of o.split(",").filter(Boolean)) {
    if (opt in FLAGS) flags |= FLAGS[opt]!;
    else data.push(opt);
  }
  return { flags, data: data.join(",") };
}

/** What mount(8) says, as the errno it stands for, in Go's words (its own text when none fits). */
function errnoText(said: string): string {
  if (/does not exist|no such file/i.test(said)) return "no such file or directory";
  if (/not a directory/i.test(said)) return "not a directory";
  if (/permission denied/i.test(said)) return "permission denied";
  if (/only root|operation not permitted/i.test(said)) return "operation not permitted";
  if (/already mounted|busy/i.test(said)) return "device or resource busy";
  if (/unknown filesystem type/i.test(said)) return "no such device";
  if (/wrong fs type|bad option|bad superblock|invalid argument/i.test(said)) return "invalid argument";
  return said.split("\n")[0]!.replace(/^mount:\s*/, "").trim();
}

export function localMountError(device: string, target: string, o: string, said: string): Error {
  const { flags, data: raw } = splitMountOptions(o);
  // as Docker's driver hides it
  const data = raw.replace(/password=[^,]*/, "password=********");
  const where = `mount ${device}:${target}${flags ? `, flags: 0x${flags.toString(16)}` : ""}${data ? `, data: ${data}` : ""}`;
  return new Error(`failed to mount local volume: ${where}: ${errnoText(said)}`);
}
