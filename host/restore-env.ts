/**
 * bin/engined starts the daemon with glibc's malloc backing its heap with transparent huge
 * pages (`GLIBC_TUNABLES=glibc.malloc.hugetlb=1`, read by glibc when the process starts): a
 * pull's download Buffers are allocated and freed by the hundred MB, and the heap they grow
 * into was otherwise faulted in 4 KiB at a time (40 000 page faults a 200 MB pull, 0.2-0.3 s of
 * the event loop's time). The processes the daemon starts (the supervisor, conmon, runc,
 * unpigz) must not inherit the setting: a small process's heap would then grow by 2 MiB pages.
 * So the environment is put back here, before anything is spawned, as it was before
 * bin/engined: `ENGINE_GLIBC_TUNABLES_WAS` holds "=" and the old value, or "" when it was unset.
 */
const WAS = "ENGINE_GLIBC_TUNABLES_WAS";

const was = process.env[WAS];
if (was !== undefined) {
  if (was.startsWith("=")) process.env.GLIBC_TUNABLES = was.slice(1);
  else delete process.env.GLIBC_TUNABLES;
  delete process.env[WAS];
}
