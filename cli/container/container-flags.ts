/**
 * The flags `run` and `create` share (what goes into the container's configuration), with the
 * Docker CLI's names, help lines and value checks, and the few that only `run` has. A `check`
 * runs as pflag runs a flag's validator, while the command line is read: a bad value is a usage
 * error naming the flag as typed. Values that need more than one flag, a file or the daemon are
 * read later, in container-config.ts and the option files next to it.
 */
import type { FlagSpec } from "../flags.js";
import { parseGoDuration } from "../../core/build/go-text.js";
import { parseBytes, parseMemSwap, parseNanoCpus, parseUint, parseUlimit, validExtraHost, validLabel, validLink } from "./units.js";
import { parseGpuRequest, validDeviceCgroupRule, parseThrottleBps, parseThrottleIops, parseWeightDevice } from "./device-options.js";
import { parseMount } from "./mount-options.js";
import { parseNetworkFlag, validDnsSearch, validIpAddress } from "./network-options.js";
import { validSysctl } from "./security-options.js";

/** Only checks: the value is kept as typed and read again where it is used. */
const checks =
  (read: (v: string) => unknown) =>
  (v: string): string => {
    read(v);
    return v;
  };

function validAttach(v: string): string {
  const s = v.toLowerCase();
  if (!["stdin", "stdout", "stderr"].includes(s)) throw new Error("valid streams are STDIN, STDOUT and STDERR");
  return s;
}

const bytes = { type: "string", valueName: "bytes", check: checks(parseBytes) } as const;
const duration = { type: "string", valueName: "duration", check: checks(parseGoDuration) } as const;
const list = { type: "list" } as const;
const map = { type: "list", valueName: "map" } as const;
const str = { type: "string" } as const;
const int = { type: "int" } as const;
const bool = { type: "bool" } as const;

export const CONTAINER_FLAGS: FlagSpec[] = [
  { name: "add-host", ...list, check: validExtraHost, description: "Add a custom host-to-IP mapping (host:ip)" },
  { name: "annotation", ...map, description: "Add an annotation to the container (passed through to the OCI runtime) (default map[])" },
  { name: "attach", short: "a", ...list, check: validAttach, description: "Attach to STDIN, STDOUT or STDERR" },
  { name: "blkio-weight", type: "string", valueName: "uint16", check: checks((v) => parseUint(v, 16)), description: "Block IO (relative weight), between 10 and 1000, or 0 to disable (default 0)" },
  { name: "blkio-weight-device", ...list, check: checks(parseWeightDevice), description: "Block IO weight (relative device weight) (default [])" },
  { name: "cap-add", ...list, description: "Add Linux capabilities" },
  { name: "cap-drop", ...list, description: "Drop Linux capabilities" },
  { name: "cgroup-parent", ...str, description: "Optional parent cgroup for the container" },
  { name: "cgroupns", ...str, description: "Cgroup namespace to use (host|private)" },
  { name: "cidfile", ...str, description: "Write the container ID to the file" },
  // The Windows-only flags: read, refused against a Linux daemon (flag-support.ts), and left out
  // of the help as the Docker CLI leaves them out when its daemon is not a Windows one.
  { name: "cpu-count", ...int, hidden: true, description: "CPU count (Windows only)" },
  { name: "cpu-percent", ...int, hidden: true, description: "CPU percent (Windows only)" },
  { name: "cpu-period", ...int, description: "Limit CPU CFS (Completely Fair Scheduler) period" },
  { name: "cpu-quota", ...int, description: "Limit CPU CFS (Completely Fair Scheduler) quota" },
  { name: "cpu-rt-period", ...int, description: "Limit CPU real-time period in microseconds" },
  { name: "cpu-rt-runtime", ...int, description: "Limit CPU real-time runtime in microseconds" },
  { name: "cpu-shares", short: "c", ...int, description: "CPU shares (relative weight)" },
  { name: "cpus", type: "string", valueName: "decimal", check: checks(parseNanoCpus), description: "Number of CPUs" },
  { name: "cpuset-cpus", ...str, description: "CPUs in which to allow execution (0-3, 0,1)" },
  { name: "cpuset-mems", ...str, description: "MEMs in which to allow execution (0-3, 0,1)" },
  { name: "device", ...list, description: "Add a host device to the container" },
  { name: "device-cgroup-rule", ...list, check: validDeviceCgroupRule, description: "Add a rule to the cgroup allowed devices list" },
  { name: "device-read-bps", ...list, check: checks(parseThrottleBps), description: "Limit read rate (bytes per second) from a device (default [])" },
  { name: "device-read-iops", ...list, check: checks(parseThrottleIops), description: "Limit read rate (IO per second) from a device (default [])" },
  { name: "device-write-bps", ...list, check: checks(parseThrottleBps), description: "Limit write rate (bytes per second) to a device (default [])" },
  { name: "device-write-iops", ...list, check: checks(parseThrottleIops), description: "Limit write rate (IO per second) to a device (default [])" },
  // Content trust is not part of this client: the flag is read and changes nothing.
  { name: "disable-content-trust", ...bool, default: true, description: "Skip image verification" },
  { name: "dns", ...list, check: validIpAddress, description: "Set custom DNS servers" },
  { name: "dns-opt", ...list, into: "dns-option", hidden: true, description: "Set DNS options" },
  { name: "dns-option", ...list, description: "Set DNS options" },
  { name: "dns-search", ...list, check: validDnsSearch, description: "Set custom DNS search domains" },
  { name: "domainname", ...str, description: "Container NIS domain name" },
  { name: "entrypoint", ...str, description: "Overwrite the default ENTRYPOINT of the image" },
  { name: "env", short: "e", ...list, description: "Set environment variables" },
  { name: "env-file", ...list, description: "Read in a file of environment variables" },
  { name: "expose", ...list, description: "Expose a port or a range of ports" },
  { name: "gpus", ...list, valueName: "gpu-request", check: checks(parseGpuRequest), description: "GPU devices to add to the container ('all' to pass all GPUs)" },
  { name: "group-add", ...list, description: "Add additional groups to join" },
  { name: "health-cmd", ...str, description: "Command to run to check health" },
  { name: "health-interval", ...duration, description: "Time between running the check (ms|s|m|h) (default 0s)" },
  { name: "health-retries", ...int, description: "Consecutive failures needed to report unhealthy" },
  { name: "health-start-interval", ...duration, description: "Time between running the check during the start period (ms|s|m|h) (default 0s)" },
  { name: "health-start-period", ...duration, description: "Start period for the container to initialize before starting health-retries countdown (ms|s|m|h) (default 0s)" },
  { name: "health-timeout", ...duration, description: "Maximum time to allow one check to run (ms|s|m|h) (default 0s)" },
  { name: "hostname", short: "h", ...str, description: "Container host name" },
  { name: "init", ...bool, description: "Run an init inside the container that forwards signals and reaps processes" },
  { name: "interactive", short: "i", ...bool, description: "Keep STDIN open even if not attached" },
  { name: "io-maxbandwidth", ...bytes, hidden: true, description: "Maximum IO bandwidth limit for the system drive (Windows only)" },
  { name: "io-maxiops", type: "string", valueName: "uint", hidden: true, check: checks((v) => parseUint(v, 64)), description: "Maximum IOps limit for the system drive (Windows only)" },
  { name: "ip", ...str, description: "IPv4 address (e.g., 172.30.100.104)" },
  { name: "ip6", ...str, description: "IPv6 address (e.g., 2001:db8::33)" },
  { name: "ipc", ...str, description: "IPC mode to use" },
  { name: "isolation", ...str, description: "Container isolation technology" },
  // Docker's daemon dropped kernel memory limits (API 1.42): the value is checked, then not sent.
  { name: "kernel-memory", ...bytes, description: "Kernel memory limit" },
  { name: "label", short: "l", ...list, check: validLabel, description: "Set meta data on a container" },
  { name: "label-file", ...list, description: "Read in a line delimited file of labels" },
  { name: "link", ...list, check: validLink, description: "Add link to another container" },
  { name: "link-local-ip", ...list, description: "Container IPv4/IPv6 link-local addresses" },
  { name: "log-driver", ...str, description: "Logging driver for the container" },
  { name: "log-opt", ...list, description: "Log driver options" },
  { name: "mac-address", ...str, description: "Container MAC address (e.g., 92:d0:c6:0a:29:33)" },
  { name: "memory", short: "m", ...bytes, description: "Memory limit" },
  { name: "memory-reservation", ...bytes, description: "Memory soft limit" },
  { name: "memory-swap", ...bytes, check: checks(parseMemSwap), description: "Swap limit equal to memory plus swap: '-1' to enable unlimited swap" },
  { name: "memory-swappiness", ...int, default: -1, description: "Tune container memory swappiness (0 to 100)" },
  { name: "mount", ...list, valueName: "mount", check: checks(parseMount), description: "Attach a filesystem mount to the container" },
  { name: "name", ...str, description: "Assign a name to the container" },
  { name: "net", ...list, into: "network", hidden: true, check: checks(parseNetworkFlag), description: "Connect a container to a network" },
  { name: "net-alias", ...list, into: "network-alias", hidden: true, description: "Add network-scoped alias for the container" },
  { name: "network", ...list, valueName: "network", check: checks(parseNetworkFlag), description: "Connect a container to a network" },
  { name: "network-alias", ...list, description: "Add network-scoped alias for the container" },
  { name: "no-healthcheck", ...bool, description: "Disable any container-specified HEALTHCHECK" },
  { name: "oom-kill-disable", ...bool, description: "Disable OOM Killer" },
  { name: "oom-score-adj", ...int, description: "Tune host's OOM preferences (-1000 to 1000)" },
  { name: "pid", ...str, description: "PID namespace to use" },
  { name: "pids-limit", ...int, description: "Tune container pids limit (set -1 for unlimited)" },
  { name: "platform", ...str, description: "Set platform if server is multi-platform capable" },
  { name: "privileged", ...bool, description: "Give extended privileges to this container" },
  { name: "publish", short: "p", ...list, description: "Publish a container's port(s) to the host" },
  { name: "publish-all", short: "P", ...bool, description: "Publish all exposed ports to random ports" },
  { name: "pull", ...str, description: `Pull image before creating ("always", "missing", "never")`, default: "missing" },
  { name: "quiet", short: "q", ...bool, description: "Suppress the pull output" },
  { name: "read-only", ...bool, description: "Mount the container's root filesystem as read only" },
  { name: "restart", ...str, description: "Restart policy to apply when a container exits", default: "no" },
  { name: "rm", ...bool, description: "Automatically remove the container and its associated anonymous volumes when it exits" },
  { name: "runtime", ...str, description: "Runtime to use for this container" },
  { name: "security-opt", ...list, description: "Security Options" },
  { name: "shm-size", ...bytes, description: "Size of /dev/shm" },
  { name: "stop-signal", ...str, description: "Signal to stop the container" },
  { name: "stop-timeout", ...int, description: "Timeout (in seconds) to stop a container" },
  { name: "storage-opt", ...list, description: "Storage driver options for the container" },
  { name: "sysctl", ...map, check: validSysctl, description: "Sysctl options (default map[])" },
  { name: "tmpfs", ...list, description: "Mount a tmpfs directory" },
  { name: "tty", short: "t", ...bool, description: "Allocate a pseudo-TTY" },
  { name: "ulimit", ...list, valueName: "ulimit", check: checks(parseUlimit), description: "Ulimit options (default [])" },
  { name: "use-api-socket", ...bool, description: "Bind mount Docker API socket and required auth" },
  { name: "user", short: "u", ...str, description: "Username or UID (format: <name|uid>[:<group|gid>])" },
  { name: "userns", ...str, description: "User namespace to use" },
  { name: "uts", ...str, description: "UTS namespace to use" },
  { name: "volume", short: "v", ...list, description: "Bind mount a volume" },
  { name: "volume-driver", ...str, description: "Optional volume driver for the container" },
  { name: "volumes-from", ...list, description: "Mount volumes from the specified container(s)" },
  { name: "workdir", short: "w", ...str, description: "Working directory inside the container" },
];

/** What `run` adds: how the client stays with the container. */
export const RUN_FLAGS: FlagSpec[] = [
  { name: "detach", short: "d", type: "bool", description: "Run container in background and print container ID" },
  { name: "detach-keys", type: "string", description: "Override the key sequence for detaching a container" },
  { name: "sig-proxy", type: "bool", description: "Proxy received signals to the process", default: true },
];

/** Flags the Docker CLI accepts only against a Windows daemon (its `ostype` annotation). */
export const WINDOWS_ONLY_FLAGS: readonly string[] = ["cpu-count", "cpu-percent", "io-maxbandwidth", "io-maxiops"];

/** The API version each flag needs (the Docker CLI's `version` annotations). */
export const FLAG_API_VERSIONS: Readonly<Record<string, string>> = {
  annotation: "1.43",
  cgroupns: "1.41",
  cpus: "1.25",
  "cpu-rt-period": "1.25",
  "cpu-rt-runtime": "1.25",
  gpus: "1.40",
  "health-start-interval": "1.44",
  "health-start-period": "1.29",
  init: "1.25",
  platform: "1.32",
  "stop-timeout": "1.25",
};

/**
 * Both lists, sorted by name as the Docker CLI's help shows them: by code point, as Go compares
 * strings (not localeCompare: its first call sets up ICU's collator, 25 ms of every `engine run`).
 */
export function sortedFlags(...lists: FlagSpec[][]): FlagSpec[] {
  return lists.flat().sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
