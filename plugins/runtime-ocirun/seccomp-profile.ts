/**
 * The builtin seccomp profile, written for this project: an allow-list. A system call not named
 * here fails with EPERM (`SCMP_ACT_ERRNO`, errno 1), so a program sees "Operation not
 * permitted" and not a kill. The list keeps what ordinary programs use (files, memory,
 * processes, signals, sockets, time, the *at family and the 32-bit variants); it leaves out
 * what changes the system or escapes the container: mount, umount, pivot_root, unshare, setns,
 * namespaces in clone flags, kernel modules, kexec, reboot, swap, the clock, keyrings, bpf,
 * perf events, userfaultfd, open_by_handle_at, quotactl, syslog, acct, iopl/ioperm. ptrace is
 * allowed, as by Docker on kernels from 4.8 (where seccomp is checked again after a tracer's change).
 *
 * `clone` is allowed only without namespace flags; `clone3` answers ENOSYS, so libc falls
 * back to `clone` where the flags can be checked (seccomp cannot read clone3's struct).
 */
import type { OciSeccomp } from "../../core/contracts/runtime.js";

const EPERM = 1;
const ENOSYS = 38;

/** CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET (clone's low byte is the exit signal, so no NEWTIME). */
const CLONE_NAMESPACE_FLAGS = 0x7e020000;

/** Syscalls allowed on every architecture (names unknown to an architecture are skipped by the runtime). */
const ALLOWED_SYSCALLS: readonly string[] = [
  "accept", "accept4", "access", "adjtimex", "alarm", "arch_prctl", "bind", "brk", "cachestat", "capget", "capset",
  "chdir", "chmod", "chown", "chown32", "clock_adjtime", "clock_adjtime64", "clock_getres", "clock_getres_time64",
  "clock_gettime", "clock_gettime64", "clock_nanosleep", "clock_nanosleep_time64", "close", "close_range", "connect",
  "copy_file_range", "creat", "dup", "dup2", "dup3", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_ctl_old",
  "epoll_pwait", "epoll_pwait2", "epoll_wait", "epoll_wait_old", "eventfd", "eventfd2", "execve", "execveat", "exit",
  "exit_group", "faccessat", "faccessat2", "fadvise64", "fadvise64_64", "fallocate", "fanotify_mark", "fchdir", "fchmod",
  "fchmodat", "fchmodat2", "fchown", "fchown32", "fchownat", "fcntl", "fcntl64", "fdatasync", "fgetxattr", "flistxattr",
  "flock", "fork", "fremovexattr", "fsetxattr", "fstat", "fstat64", "fstatat64", "fstatfs", "fstatfs64", "fsync",
  "ftruncate", "ftruncate64", "futex", "futex_requeue", "futex_time64", "futex_wait", "futex_waitv", "futex_wake",
  "futimesat", "get_mempolicy", "get_robust_list", "get_thread_area", "getcpu", "getcwd", "getdents", "getdents64",
  "getegid", "getegid32", "geteuid", "geteuid32", "getgid", "getgid32", "getgroups", "getgroups32", "getitimer",
  "getpeername", "getpgid", "getpgrp", "getpid", "getppid", "getpriority", "getrandom", "getresgid", "getresgid32",
  "getresuid", "getresuid32", "getrlimit", "getrusage", "getsid", "getsockname", "getsockopt", "gettid",
  "gettimeofday", "getuid", "getuid32", "getxattr", "inotify_add_watch", "inotify_init", "inotify_init1",
  "inotify_rm_watch", "io_cancel", "io_destroy", "io_getevents", "io_pgetevents", "io_pgetevents_time64", "io_setup",
  "io_submit", "ioctl", "ioprio_get", "ioprio_set", "ipc", "kill", "landlock_add_rule", "landlock_create_ruleset",
  "landlock_restrict_self", "lchown", "lchown32", "lgetxattr", "link", "linkat", "listen", "listxattr", "llistxattr",
  "lremovexattr", "lseek", "lsetxattr", "lstat", "lstat64", "madvise", "map_shadow_stack", "membarrier", "memfd_create",
  "memfd_secret", "mincore", "mkdir", "mkdirat", "mknod", "mknodat", "mlock", "mlock2", "mlockall", "mmap", "mmap2",
  "mprotect", "mq_getsetattr", "mq_notify", "mq_open", "mq_timedreceive", "mq_timedreceive_time64", "mq_timedsend",
  "mq_timedsend_time64", "mq_unlink", "mremap", "msgctl", "msgget", "msgrcv", "msgsnd", "msync", "munlock",
  "munlockall", "munmap", "name_to_handle_at", "nanosleep", "newfstatat", "open", "openat", "openat2", "pause",
  "pidfd_getfd", "pidfd_open", "pidfd_send_signal", "pipe", "pipe2", "pkey_alloc", "pkey_free", "pkey_mprotect", "poll",
  "ppoll", "ppoll_time64", "prctl", "pread64", "preadv", "preadv2", "prlimit64", "process_mrelease", "pselect6",
  "pselect6_time64", "ptrace", "pwrite64", "pwritev", "pwritev2", "read", "readahead", "readlink", "readlinkat", "readv",
  "recv", "recvfrom", "recvmmsg", "recvmmsg_time64", "recvmsg", "remap_file_pages", "removexattr", "rename", "renameat",
  "renameat2", "restart_syscall", "rmdir", "rseq", "rt_sigaction", "rt_sigpending", "rt_sigprocmask", "rt_sigqueueinfo",
  "rt_sigreturn", "rt_sigsuspend", "rt_sigtimedwait", "rt_sigtimedwait_time64", "rt_tgsigqueueinfo",
  "sched_get_priority_max", "sched_get_priority_min", "sched_getaffinity", "sched_getattr", "sched_getparam",
  "sched_getscheduler", "sched_rr_get_interval", "sched_rr_get_interval_time64", "sched_setaffinity", "sched_setattr",
  "sched_setparam", "sched_setscheduler", "sched_yield", "seccomp", "select", "semctl", "semget", "semop", "semtimedop",
  "semtimedop_time64", "send", "sendfile", "sendfile64", "sendmmsg", "sendmsg", "sendto", "set_robust_list",
  "set_thread_area", "set_tid_address", "setfsgid", "setfsgid32", "setfsuid", "setfsuid32", "setgid", "setgid32",
  "setgroups", "setgroups32", "setitimer", "setpgid", "setpriority", "setregid", "setregid32", "setresgid",
  "setresgid32", "setresuid", "setresuid32", "setreuid", "setreuid32", "setrlimit", "setsid", "setsockopt", "setuid",
  "setuid32", "setxattr", "shmat", "shmctl", "shmdt", "shmget", "shutdown", "sigaltstack", "signalfd", "signalfd4",
  "sigprocmask", "sigreturn", "socketcall", "socketpair", "splice", "stat", "stat64", "statfs", "statfs64", "statx",
  "symlink", "symlinkat", "sync", "sync_file_range", "syncfs", "sysinfo", "tee", "tgkill", "time", "timer_create",
  "timer_delete", "timer_getoverrun", "timer_gettime", "timer_gettime64", "timer_settime", "timer_settime64",
  "timerfd_create", "timerfd_gettime", "timerfd_gettime64", "timerfd_settime", "timerfd_settime64", "times", "tkill",
  "truncate", "truncate64", "ugetrlimit", "umask", "uname", "unlink", "unlinkat", "utime", "utimensat",
  "utimensat_time64", "utimes", "vfork", "wait4", "waitid", "waitpid", "write", "writev",
  // chroot is for CAP_SYS_CHROOT, in the default capability set; the capability still decides.
  "chroot",
];

/** Address families a container may open sockets in (AF_VSOCK 40 and the rest are refused). */
const SOCKET_FAMILY_MAX = 39;

/** `personality` values programs set (Linux default, UNAME26, ADDR_NO_RANDOMIZE, 32-bit, query). */
const PERSONALITIES = [0x0, 0x0008, 0x20000, 0x20008, 0xffffffff];

/** The seccomp architectures for a Node `process.arch`. */
export function seccompArchitectures(arch: string = process.arch): string[] {
  switch (arch) {
    case "x64":
      return ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"];
    case "ia32":
      return ["SCMP_ARCH_X86"];
    case "arm64":
      return ["SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM"];
    case "arm":
      return ["SCMP_ARCH_ARM"];
    default:
      return [];
  }
}

/** The builtin profile, in the OCI form (`linux.seccomp` of config.json). */
export function builtinSeccompProfile(arch: string = process.arch): OciSeccomp {
  return {
    defaultAction: "SCMP_ACT_ERRNO",
    defaultErrnoRet: EPERM,
    architectures: seccompArchitectures(arch),
    syscalls: [
      { names: [...ALLOWED_SYSCALLS], action: "SCMP_ACT_ALLOW" },
      // socket(family, ...): the families below AF_VSOCK.
      { names: ["socket"], action: "SCMP_ACT_ALLOW", args: [{ index: 0, value: SOCKET_FAMILY_MAX, op: "SCMP_CMP_LE" }] },
      ...PERSONALITIES.map((value) => ({
        names: ["personality"], action: "SCMP_ACT_ALLOW", args: [{ index: 0, value, op: "SCMP_CMP_EQ" }],
      })),
      // clone(flags, ...) without any namespace flag (flags is argument 0 on x86 and arm).
      {
        names: ["clone"], action: "SCMP_ACT_ALLOW",
        args: [{ index: 0, value: CLONE_NAMESPACE_FLAGS, valueTwo: 0, op: "SCMP_CMP_MASKED_EQ" }],
      },
      { names: ["clone3"], action: "SCMP_ACT_ERRNO", errnoRet: ENOSYS },
    ],
  };
}
