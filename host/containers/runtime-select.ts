/**
 * Which OCI runtime binary runs a container, with which global arguments: Docker's rules over
 * `default-runtime` and the `runtimes` map (`--add-runtime name=path` and daemon.json `runtimes`
 * both end in `config["add-runtime"]`), with our names. `ocirun` is the built-in runtime, the
 * `runc` binary on PATH (what `/info` reports, see runtimesInfo in host/config-report.ts), also
 * known by Docker's name for it, `runc`.
 *
 * The supervisor runs OCI runtimes through conmon; it has no shims. A runtime entry of the
 * ocirun shim type (`io.supervisor.ocirun.v2`, or Docker's `io.containerd.runc.v2`) is therefore
 * taken as runc with its options (`BinaryName`, `SystemdCgroup`); any other shim, configured or
 * asked for by its fully qualified name, is refused.
 */
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { errors } from "../../core/errors.js";
import { cgroupDriverOf, type RuleHost } from "../../core/options/rules.js";
import type { DaemonConfig } from "../../core/options/table.js";
import { DEFAULT_RUNTIME_NAME, type RuntimeEntry } from "../../core/options/value-types-structured.js";

export interface SelectedRuntime {
  /** The name the container asked for, or the daemon's default-runtime. */
  name: string;
  /** Absolute path of the OCI runtime binary (resolved on PATH when the config gave a bare name). */
  path: string;
  /** Global flags before every runtime command: globalRuntimeArgs(config, host), then the entry's runtimeArgs. */
  args: string[];
}

/** The runtime types taken as the built-in runtime (runc through conmon). */
const OCIRUN_RUNTIME_TYPES: readonly string[] = ["io.supervisor.ocirun.v2", "io.containerd.runc.v2"];

/** Global arguments of every OCI runtime (before the command): `--systemd-cgroup` with the systemd cgroup driver. */
export function globalRuntimeArgs(config: DaemonConfig, host: RuleHost): string[] {
  return cgroupDriverOf(config, host) === "systemd" ? ["--systemd-cgroup"] : [];
}

/** The binary of the built-in runtime. */
const RUNC = "runc";

interface Plan {
  name: string;
  /** As configured: an absolute path, or a name to look up on PATH. */
  binary: string;
  /** Arguments after globalRuntimeArgs. */
  extraArgs: string[];
  /** Add `--systemd-cgroup` if globalRuntimeArgs did not. */
  systemdCgroup: boolean;
}

/**
 * A fully qualified shim name as containerd reads one (Docker's isPermissibleC8dRuntimeName):
 * not a path, at least one dot, not starting with one.
 */
function isShimName(name: string): boolean {
  return !name.includes("/") && name.includes(".") && !name.startsWith(".");
}

function planOf(config: DaemonConfig, requested: string | undefined | null): Plan {
  const name = requested || config["default-runtime"];
  const runtimes = config["add-runtime"] ?? {};
  const entry: RuntimeEntry | undefined = Object.hasOwn(runtimes, name) ? runtimes[name] : undefined;
  if (entry) {
    if ("path" in entry) return { name, binary: entry.path, extraArgs: [...(entry.runtimeArgs ?? [])], systemdCgroup: false };
    if (!OCIRUN_RUNTIME_TYPES.includes(entry.runtimeType)) throw errors.runtimeNotSupported(name, entry.runtimeType);
    const options = entry.options ?? {};
    const binaryName = typeof options.BinaryName === "string" && options.BinaryName !== "" ? options.BinaryName : RUNC;
    return { name, binary: binaryName, extraArgs: [], systemdCgroup: options.SystemdCgroup === true };
  }
  // `runc`, the name Docker gives its built-in runtime (compose files' `runtime: runc`, Docker's
  // daemon.json `default-runtime`), is the built-in one too (option parsing reserves the name, as Docker 28 does)
  if (name === DEFAULT_RUNTIME_NAME || name === RUNC || OCIRUN_RUNTIME_TYPES.includes(name)) {
    return { name, binary: RUNC, extraArgs: [], systemdCgroup: false };
  }
  if (isShimName(name)) throw errors.runtimeNotSupported(name, name);
  throw errors.runtimeUnknown(name);
}

/** Why a file cannot be run, or undefined when it can (a regular file with an execute bit, X_OK). */
function unusable(file: string): string | undefined {
  let st;
  try {
    st = statSync(file);
  } catch (err) {
    // the words Docker's shim fails with for a runtime path that is not there (Go's ENOENT text)
    return (err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file or directory" : "not found";
  }
  if (!st.isFile()) return "not a regular file";
  if ((st.mode & 0o111) === 0) return "not executable";
  try {
    accessSync(file, constants.X_OK); // access(2): also refuses what this user may not run
  } catch {
    return "not executable";
  }
  return undefined;
}

/** Absolute path of the binary: kept when absolute, else the first executable match on PATH (like Go's exec.LookPath). */
function resolveBinary(name: string, binary: string, pathEnv: string): string {
  if (isAbsolute(binary)) {
    const why = unusable(binary);
    if (why) throw errors.runtimeBinaryUnusable(name, binary, why);
    return binary;
  }
  if (binary.includes("/")) throw errors.runtimeBinaryUnusable(name, binary, "not an absolute path or a name on PATH");
  for (const dir of pathEnv.split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue; // relative PATH entries would depend on the daemon's cwd
    const candidate = join(dir, binary);
    if (unusable(candidate) === undefined) return candidate;
  }
  throw errors.runtimeBinaryUnusable(name, binary, "not found on PATH");
}

/**
 * The runtime for a container: `requested` (its HostConfig.Runtime) or the default runtime.
 * Throws 400 EngineErrors: unknown name, a shim, or a binary that is missing or not executable.
 */
export function selectRuntime(
  config: DaemonConfig,
  requested: string | undefined | null,
  host: RuleHost,
  pathEnv = process.env.PATH ?? "",
): SelectedRuntime {
  const plan = planOf(config, requested);
  const path = resolveBinary(plan.name, plan.binary, pathEnv);
  const args = [...globalRuntimeArgs(config, host)];
  if (plan.systemdCgroup && !args.includes("--systemd-cgroup")) args.push("--systemd-cgroup");
  args.push(...plan.extraArgs);
  return { name: plan.name, path, args };
}

/** selectRuntime's validation of the name without resolving the binary (at container create). */
export function checkRuntimeName(config: DaemonConfig, requested: string | undefined | null): void {
  planOf(config, requested);
}

