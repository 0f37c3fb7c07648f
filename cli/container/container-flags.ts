/**
 * The flags `run` and `create` share (what goes into the container's configuration), with the
 * Docker CLI's names and help lines, and the few that only `run` has.
 */
import type { FlagSpec } from "../flags.js";

export const CONTAINER_FLAGS: FlagSpec[] = [
  { name: "add-host", type: "list", description: "Add a custom host-to-IP mapping (host:ip)" },
  { name: "attach", short: "a", type: "list", description: "Attach to STDIN, STDOUT or STDERR" },
  { name: "cap-add", type: "list", description: "Add Linux capabilities" },
  { name: "cap-drop", type: "list", description: "Drop Linux capabilities" },
  { name: "cpus", type: "string", valueName: "decimal", description: "Number of CPUs" },
  { name: "dns", type: "list", description: "Set custom DNS servers" },
  { name: "entrypoint", type: "string", description: "Overwrite the default ENTRYPOINT of the image" },
  { name: "env", short: "e", type: "list", description: "Set environment variables" },
  { name: "env-file", type: "list", description: "Read in a file of environment variables" },
  { name: "expose", type: "list", description: "Expose a port or a range of ports" },
  { name: "hostname", short: "h", type: "string", description: "Container host name" },
  { name: "init", type: "bool", description: "Run an init inside the container that forwards signals and reaps processes" },
  { name: "interactive", short: "i", type: "bool", description: "Keep STDIN open even if not attached" },
  { name: "label", short: "l", type: "list", description: "Set meta data on a container" },
  { name: "link", type: "list", description: "Add link to another container" },
  { name: "log-driver", type: "string", description: "Logging driver for the container" },
  { name: "log-opt", type: "list", description: "Log driver options" },
  { name: "memory", short: "m", type: "string", valueName: "bytes", description: "Memory limit" },
  { name: "name", type: "string", description: "Assign a name to the container" },
  { name: "network", type: "string", valueName: "network", description: "Connect a container to a network" },
  { name: "pids-limit", type: "int", description: "Tune container pids limit (set -1 for unlimited)" },
  { name: "privileged", type: "bool", description: "Give extended privileges to this container" },
  { name: "publish", short: "p", type: "list", description: "Publish a container's port(s) to the host" },
  { name: "pull", type: "string", description: `Pull image before creating ("always", "missing", "never")`, default: "missing" },
  { name: "quiet", short: "q", type: "bool", description: "Suppress the pull output" },
  { name: "read-only", type: "bool", description: "Mount the container's root filesystem as read only" },
  { name: "restart", type: "string", description: "Restart policy to apply when a container exits", default: "no" },
  { name: "rm", type: "bool", description: "Automatically remove the container and its associated anonymous volumes when it exits" },
  { name: "runtime", type: "string", description: "Runtime to use for this container" },
  { name: "shm-size", type: "string", valueName: "bytes", description: "Size of /dev/shm" },
  { name: "stop-signal", type: "string", description: "Signal to stop the container" },
  { name: "stop-timeout", type: "int", description: "Timeout (in seconds) to stop a container" },
  { name: "tmpfs", type: "list", description: "Mount a tmpfs directory" },
  { name: "tty", short: "t", type: "bool", description: "Allocate a pseudo-TTY" },
  { name: "ulimit", type: "list", valueName: "ulimit", description: "Ulimit options" },
  { name: "user", short: "u", type: "string", description: "Username or UID (format: <name|uid>[:<group|gid>])" },
  { name: "volume", short: "v", type: "list", description: "Bind mount a volume" },
  { name: "workdir", short: "w", type: "string", description: "Working directory inside the container" },
];

/** What `run` adds: how the client stays with the container. */
export const RUN_FLAGS: FlagSpec[] = [
  { name: "detach", short: "d", type: "bool", description: "Run container in background and print container ID" },
  { name: "detach-keys", type: "string", description: "Override the key sequence for detaching a container" },
  { name: "sig-proxy", type: "bool", description: "Proxy received signals to the process", default: true },
];

/** Both lists, sorted by name as the Docker CLI's help shows them. */
export function sortedFlags(...lists: FlagSpec[][]): FlagSpec[] {
  return lists.flat().sort((a, b) => a.name.localeCompare(b.name));
}
