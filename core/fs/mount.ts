/**
 * mount(2) and umount2(2), called through libc (koffi, a maintained FFI package with prebuilt
 * binaries) instead of running mount(8) and umount(8). A fork of the daemon costs its event loop
 * 15-35 ms (the kernel copies the page tables of a process of a hundred MB and more, whatever
 * thread asks), and a container's start and removal needed four of them; the system calls take
 * a fraction of a millisecond (bench/event-loop.mjs measures both). They run on koffi's worker
 * threads all the same: unmounting an overlay syncs its upper file system, which took 570 ms
 * after a container had written 200 MB.
 *
 * Only what the daemon mounts for itself goes this way: overlay, bind and tmpfs. mount(8) stays
 * for file systems whose mounting needs a helper program (fuse.*, nfs, zfs...), see `viaSyscall`.
 */
import { constants } from "node:os";
import { getSystemErrorMessage, getSystemErrorName } from "node:util";
import { libc as loadLibc } from "../libc.js";

// libc's two calls, loaded with the first mount
let calls: { koffi: typeof import("koffi"); sysMount: Call; sysUmount2: Call } | undefined;

function libc(): NonNullable<typeof calls> {
  if (calls) return calls;
  const { koffi, lib } = loadLibc();
  return (calls = {
    koffi,
    sysMount: lib.func("int mount(const char *source, const char *target, const char *fstype, unsigned long flags, const char *data)") as Call,
    sysUmount2: lib.func("int umount2(const char *target, int flags)") as Call,
  });
}

const MS_RDONLY = 1;
const MS_REMOUNT = 32;
const MS_BIND = 4096;
const MS_REC = 16384;
const MNT_DETACH = 2;

/** mount(8)'s words for flags (the ones the daemon and its drivers use); others are the file system's data. */
const FLAG_WORDS: Record<string, number> = {
  ro: MS_RDONLY,
  rw: 0,
  nosuid: 2,
  nodev: 4,
  noexec: 8,
  sync: 16,
  dirsync: 128,
  noatime: 1024,
  nodiratime: 2048,
  relatime: 1 << 21,
  strictatime: 1 << 24,
  bind: MS_BIND,
  rbind: MS_BIND | MS_REC,
};

/** An error from a system call, with the errno's name as `code`, as Node's own fs errors have. */
class MountError extends Error {
  constructor(
    readonly code: string,
    readonly errno: number,
    syscall: string,
    target: string,
  ) {
    super(`${syscall} ${target}: ${getSystemErrorMessage(-errno)} (${code})`);
  }
}

function fail(syscall: string, target: string): never {
  const errno = libc().koffi.errno();
  throw new MountError(getSystemErrorName(-errno), errno, syscall, target);
}

type Call = ((...args: unknown[]) => number) & { async(...args: unknown[]): void };

/**
 * The call on a worker thread; 0 when it succeeded. A failure is repeated on this thread, whose
 * errno koffi.errno() reads (the worker's is out of reach): a mount or unmount that failed
 * changed nothing, so the repeat fails the same way, and should it succeed, so much the better.
 */
async function syscall(fn: Call, ...args: unknown[]): Promise<number> {
  const result = await new Promise<number>((resolve, reject) => fn.async(...args, (err: Error | null, r: number) => (err ? reject(err) : resolve(r))));
  return result === 0 ? 0 : fn(...args);
}

/** The file system types this module mounts itself; the others go through mount(8). */
export function viaSyscall(type: string): boolean {
  return type === "overlay" || type === "bind" || type === "tmpfs";
}

/**
 * Mounts `source` on `target` as mount(8) `-t type -o options` would: words of FLAG_WORDS become
 * flags, the rest the data string. A bind with flags is a bind then a remount with them, as
 * mount(8) does (the kernel ignores them on the bind itself).
 */
export async function mount(source: string, target: string, type: string, options: readonly string[] = []): Promise<void> {
  let flags = 0;
  const data: string[] = [];
  for (const option of options) {
    if (option in FLAG_WORDS) flags |= FLAG_WORDS[option];
    else data.push(option);
  }
  if (type === "bind") flags |= MS_BIND;
  const bind = (flags & MS_BIND) !== 0;
  const fstype = bind ? null : type;
  if ((await syscall(libc().sysMount, source, target, fstype, bind ? flags & (MS_BIND | MS_REC) : flags, data.length ? data.join(",") : null)) !== 0) fail("mount", target);
  const rest = flags & ~(MS_BIND | MS_REC);
  if (bind && rest !== 0 && (await syscall(libc().sysMount, source, target, null, MS_REMOUNT | MS_BIND | rest, null)) !== 0) {
    const err = libc().koffi.errno();
    libc().sysUmount2(target, MNT_DETACH);
    throw new MountError(getSystemErrorName(-err), err, "mount", target);
  }
}

/**
 * Unmounts the topmost mount at `target`; lazily (detached, gone once unused) with `lazy`.
 * Answers false when nothing is mounted there (EINVAL) or the path is gone (ENOENT).
 */
export async function unmount(target: string, { lazy = false } = {}): Promise<boolean> {
  if ((await syscall(libc().sysUmount2, target, lazy ? MNT_DETACH : 0)) === 0) return true;
  const errno = libc().koffi.errno();
  if (errno === constants.errno.EINVAL || errno === constants.errno.ENOENT) return false;
  fail("umount", target);
}
