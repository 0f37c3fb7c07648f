/**
 * The C library through koffi (a maintained FFI package with prebuilt binaries), loaded with its
 * first use (core/lazy-require.ts): for the few system calls the daemon makes itself rather than
 * through a program it would fork (mount(2), setns(2)...).
 */
import { lazyRequire } from "./lazy-require.js";

const koffiModule = lazyRequire<typeof import("koffi")>("koffi");
let loaded: { koffi: typeof import("koffi"); lib: ReturnType<typeof import("koffi")["load"]> } | undefined;

/** koffi and libc.so.6, loaded once. */
export function libc(): NonNullable<typeof loaded> {
  if (loaded) return loaded;
  const koffi = koffiModule();
  return (loaded = { koffi, lib: koffi.load("libc.so.6") });
}
