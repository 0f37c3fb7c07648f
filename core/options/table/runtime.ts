/** Options of running containers: runtimes, the supervisor, cgroups, storage, security, CDI. */
import { BOTH, LINUX, option } from "../option.js";
import { builder, bytes, features, runtimes, ulimits } from "../value-types-structured.js";
import { bool, int, list, oneOf, string, ValueError } from "../value-types.js";
import { ip } from "../value-types-net.js";

/** `native.cgroupdriver=cgroupfs|systemd`, and on the win platform `isolation=vmiso|process`. */
function checkExecOpt(raw: string): void {
  const m = /^([a-z.]+)=(.*)$/.exec(raw);
  if (!m) throw new ValueError("expected <option>=<value>");
  if (m[1] === "native.cgroupdriver") {
    if (m[2] !== "cgroupfs" && m[2] !== "systemd") throw new ValueError("native.cgroupdriver must be cgroupfs or systemd");
    return;
  }
  if (m[1] === "isolation") {
    if (m[2] !== "vmiso" && m[2] !== "process") throw new ValueError("isolation must be vmiso or process");
    return;
  }
  throw new ValueError(`unknown exec option ${m[1]}: only native.cgroupdriver and (win platform) isolation`);
}

/** `user`, `user:group`, `uid`, `uid:gid`, or `default`. */
function checkUsernsRemap(raw: string): void {
  if (!/^(default|[a-z_][a-z0-9_-]*\$?|\d+)(:([a-z_][a-z0-9_-]*\$?|\d+))?$/i.test(raw)) {
    throw new ValueError("expected default, a user or uid, optionally :group or :gid");
  }
}

export const runtimeOptions = {
  "add-runtime": option({
    flag: "add-runtime", key: "runtimes", type: runtimes, default: {}, platforms: LINUX, group: "runtime", reloadable: true,
    metavar: "runtime", help: "Register an additional OCI compatible runtime (<name>=<path>)",
    example: { args: ["--add-runtime", "fast=/usr/bin/crun"], value: { fast: { path: "/usr/bin/crun" } } },
  }),
  "default-runtime": option({
    flag: "default-runtime", key: "default-runtime", type: string(), default: "ocirun", platforms: BOTH, group: "runtime",
    reloadable: true, help: "Default OCI runtime for containers", example: { args: ["--default-runtime", "fast"], value: "fast" },
  }),
  supervisor: option({
    flag: "supervisor", key: "supervisor", type: string(), default: "", platforms: BOTH, group: "runtime",
    help: "Address of a supervisor started by hand (by default engined starts its own)",
    example: { args: ["--supervisor", "/run/sup.sock"], value: "/run/sup.sock" },
  }),
  "supervisor-namespace": option({
    flag: "supervisor-namespace", key: "supervisor-namespace", type: string(), default: "engine", platforms: BOTH,
    group: "runtime", help: "Supervisor namespace to use", example: { args: ["--supervisor-namespace", "e2"], value: "e2" },
  }),
  "supervisor-plugins-namespace": option({
    flag: "supervisor-plugins-namespace", key: "supervisor-plugins-namespace", type: string(), default: "plugins.engine",
    platforms: BOTH, group: "runtime", help: "Supervisor namespace to use for plugins",
    example: { args: ["--supervisor-plugins-namespace", "p2"], value: "p2" },
  }),
  "cri-supervisor": option({
    flag: "cri-supervisor", key: "cri-supervisor", type: bool, default: false, platforms: LINUX, group: "runtime",
    help: "Start the supervisor with CRI", example: { args: ["--cri-supervisor"], value: true },
  }),
  "cri-cni-conf-dir": option({
    flag: "cri-cni-conf-dir", key: "cri-cni-conf-dir", type: string(), default: "/etc/cni/net.d", platforms: LINUX, group: "runtime",
    help: "Folder of the CNI network configuration for CRI pods (the first file by name is used)",
    example: { args: ["--cri-cni-conf-dir", "/etc/engine/cni"], value: "/etc/engine/cni" },
  }),
  "cri-cni-bin-dir": option({
    flag: "cri-cni-bin-dir", key: "cri-cni-bin-dirs", type: list(), default: ["/usr/lib/cni"], platforms: LINUX, group: "runtime",
    metavar: "list", help: "Folders where the CNI plugins for CRI pods are looked for, in order",
    example: { args: ["--cri-cni-bin-dir", "/opt/cni/bin"], value: ["/opt/cni/bin"] },
  }),
  "cri-stream-address": option({
    flag: "cri-stream-address", key: "cri-stream-address", type: ip, default: "127.0.0.1", platforms: LINUX, group: "runtime",
    help: "Address of the CRI streaming server (exec, attach, port-forward) that the kubelet reaches",
    example: { args: ["--cri-stream-address", "10.0.0.5"], value: "10.0.0.5" },
  }),
  "cri-stream-port": option({
    flag: "cri-stream-port", key: "cri-stream-port", type: int(0, 65535), default: 0, platforms: LINUX, group: "runtime",
    help: "Port of the CRI streaming server (0: any free port)", example: { args: ["--cri-stream-port", "10010"], value: 10010 },
  }),
  "cri-stream-tls-cert": option({
    flag: "cri-stream-tls-cert", key: "cri-stream-tls-cert", type: string(), default: "", platforms: LINUX, group: "runtime",
    help: "Certificate (PEM) of the CRI streaming server: it serves HTTPS with it and --cri-stream-tls-key",
    example: { args: ["--cri-stream-tls-cert", "/etc/engine/stream.pem"], value: "/etc/engine/stream.pem" },
  }),
  "cri-stream-tls-key": option({
    flag: "cri-stream-tls-key", key: "cri-stream-tls-key", type: string(), default: "", platforms: LINUX, group: "runtime",
    help: "Private key (PEM) of --cri-stream-tls-cert", example: { args: ["--cri-stream-tls-key", "/etc/engine/stream-key.pem"], value: "/etc/engine/stream-key.pem" },
  }),
  "exec-opt": option({
    flag: "exec-opt", key: "exec-opts", type: list(checkExecOpt), default: [], platforms: BOTH, group: "runtime",
    metavar: "list", help: "Runtime execution options (native.cgroupdriver=cgroupfs|systemd)",
    example: { args: ["--exec-opt", "native.cgroupdriver=cgroupfs"], value: ["native.cgroupdriver=cgroupfs"] },
  }),
  "cgroup-parent": option({
    flag: "cgroup-parent", key: "cgroup-parent", type: string(), default: "", platforms: LINUX, group: "runtime",
    help: "Parent cgroup for all containers (default /engine with cgroupfs, system.slice with systemd)",
    example: { args: ["--cgroup-parent", "/engine-a"], value: "/engine-a" },
  }),
  "default-cgroupns-mode": option({
    flag: "default-cgroupns-mode", key: "default-cgroupns-mode", type: oneOf("host", "private"), default: "private",
    platforms: LINUX, group: "runtime", help: 'Default mode for containers cgroup namespace ("host"|"private"; "host" when not set on a cgroup v1 host, as Docker\'s)',
    example: { args: ["--default-cgroupns-mode", "host"], value: "host" },
  }),
  "default-ipc-mode": option({
    flag: "default-ipc-mode", key: "default-ipc-mode", type: oneOf("shareable", "private"), default: "private",
    platforms: LINUX, group: "runtime", help: 'Default mode for containers ipc ("shareable"|"private")',
    example: { args: ["--default-ipc-mode", "shareable"], value: "shareable" },
  }),
  "default-shm-size": option({
    flag: "default-shm-size", key: "default-shm-size", type: bytes, default: 64 * 1024 * 1024, platforms: LINUX,
    group: "runtime", help: "Default shm size for containers", example: { args: ["--default-shm-size", "128m"], value: 128 * 1024 * 1024 },
  }),
  "default-ulimit": option({
    flag: "default-ulimit", key: "default-ulimits", type: ulimits, default: {}, platforms: BOTH, group: "runtime",
    metavar: "ulimit", help: "Default ulimits for containers (per-container values override)",
    example: { args: ["--default-ulimit", "nofile=1024:2048"], value: { nofile: { Name: "nofile", Soft: 1024, Hard: 2048 } } },
  }),
  "cpu-rt-period": option({
    flag: "cpu-rt-period", key: "cpu-rt-period", type: int(0), default: 0, platforms: LINUX, group: "runtime",
    help: "Limit the CPU real-time period in microseconds for the parent cgroup (not with cgroup v2)",
    example: { args: ["--cpu-rt-period", "1000000"], value: 1_000_000 },
  }),
  "cpu-rt-runtime": option({
    flag: "cpu-rt-runtime", key: "cpu-rt-runtime", type: int(0), default: 0, platforms: LINUX, group: "runtime",
    help: "Limit the CPU real-time runtime in microseconds for the parent cgroup (not with cgroup v2)",
    example: { args: ["--cpu-rt-runtime", "950000"], value: 950_000 },
  }),
  init: option({
    flag: "init", key: "init", type: bool, default: false, platforms: LINUX, group: "runtime",
    help: "Run an init in the container to forward signals and reap processes", example: { args: ["--init"], value: true },
  }),
  "init-path": option({
    flag: "init-path", key: "init-path", type: string(), default: "", platforms: LINUX, group: "runtime",
    help: "Path to the init binary", example: { args: ["--init-path", "/usr/bin/tini"], value: "/usr/bin/tini" },
  }),
  "cdi-spec-dir": option({
    flag: "cdi-spec-dir", key: "cdi-spec-dirs", type: list(), default: ["/etc/cdi", "/var/run/cdi"], platforms: LINUX,
    group: "runtime", metavar: "list", help: "CDI specification directories to use",
    example: { args: ["--cdi-spec-dir", "/opt/cdi"], value: ["/opt/cdi"] },
  }),
  feature: option({
    flag: "feature", key: "features", type: features, default: {}, platforms: BOTH, group: "runtime", reloadable: true,
    metavar: "map",
    help: "Enable or disable features (<name>[=<bool>]): cdi (on by default), containerd-snapshotter, windows-dns-proxy (win)",
    example: { args: ["--feature", "cdi=false", "--feature", "containerd-snapshotter"], value: { cdi: false, "containerd-snapshotter": true } },
  }),
  // --- storage ---
  "storage-driver": option({
    flag: "storage-driver", short: "s", key: "storage-driver", type: string(), default: "", env: "ENGINE_DRIVER",
    platforms: BOTH, group: "storage", help: "Storage driver to use", example: { args: ["-s", "overlay2"], value: "overlay2" },
  }),
  "storage-opt": option({
    flag: "storage-opt", key: "storage-opts", type: list(), default: [], platforms: BOTH, group: "storage", metavar: "list",
    help: "Storage driver options, <driver>.<option>=<value> (each driver's: Plugin options below)",
    example: { args: ["--storage-opt", "overlay2.size=10G"], value: ["overlay2.size=10G"] },
  }),
  builder: option({
    key: "builder", type: builder, default: {}, platforms: LINUX, group: "storage", reloadable: true,
    help: "Builder settings: the build cache's garbage collection (docs/builder.md), in the configuration file only",
    example: { file: { gc: { enabled: true, defaultKeepStorage: "10GB", policy: [{ keepStorage: "512MB", filter: ["unused-for=1400h"] }, { all: true }] } }, value: { gc: { enabled: true, defaultKeepStorage: "10GB", policy: [{ keepStorage: "512MB", filter: ["unused-for=1400h"] }, { all: true }] } } },
  }),
  // --- security ---
  "seccomp-profile": option({
    flag: "seccomp-profile", key: "seccomp-profile", type: string(), default: "builtin", platforms: LINUX, group: "security",
    help: 'Path to a seccomp profile; "unconfined" disables the default', example: { args: ["--seccomp-profile", "unconfined"], value: "unconfined" },
  }),
  "no-new-privileges": option({
    flag: "no-new-privileges", key: "no-new-privileges", type: bool, default: false, platforms: LINUX, group: "security",
    help: "Set no-new-privileges by default for new containers", example: { args: ["--no-new-privileges"], value: true },
  }),
  "selinux-enabled": option({
    flag: "selinux-enabled", key: "selinux-enabled", type: bool, default: false, platforms: LINUX, group: "security",
    help: "Enable selinux support", example: { args: ["--selinux-enabled"], value: true },
  }),
  "userns-remap": option({
    flag: "userns-remap", key: "userns-remap", type: string(checkUsernsRemap), default: "", platforms: LINUX,
    group: "security", help: "User/group for user namespaces: default (engine-remap, made if missing), user[:group] or uid[:gid]", example: { args: ["--userns-remap", "default"], value: "default" },
  }),
  "authorization-plugin": option({
    flag: "authorization-plugin", key: "authorization-plugins", type: list(), default: [], platforms: BOTH,
    group: "security", reloadable: true, metavar: "list", help: "Authorization plugins to load, in order",
    example: { args: ["--authorization-plugin", "a", "--authorization-plugin", "b"], value: ["a", "b"] },
  }),
} as const;
