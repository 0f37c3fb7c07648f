/**
 * The body of `POST /containers/create` from the flags of `run` and `create`, as the Docker
 * CLI builds it: Config (command, environment, ports, attach and TTY settings) and HostConfig
 * (binds, port bindings, network, runtime, logging, limits, restart policy). Two kinds of
 * errors: FlagValueError for a value a flag cannot take (the Docker CLI reports those as flag
 * errors), ConfigError for flags that do not go together or a file that cannot be read.
 */
import { isAbsolute, resolve } from "node:path";
import type { Parsed } from "../flags.js";
import { CONTAINER_FLAGS } from "./container-flags.js";
import { readEnvFile } from "./env-file.js";
import { HOST_CONFIG_DEFAULTS } from "./host-config-defaults.js";
import { parseExpose, parsePublish, type PortBinding } from "./ports.js";
import { keyValueMap, parseBytes, parseNanoCpus, parseUlimit, validEnv, validLabel, type Ulimit } from "./units.js";

/** A value a flag refuses: `invalid argument "foo" for "-m, --memory" flag: invalid size: 'foo'`. */
export class FlagValueError extends Error {}

/** The configuration cannot be built (conflicting flags, an unreadable file, a bad port). */
export class ConfigError extends Error {}

export type PullPolicy = "always" | "missing" | "never";

export interface ContainerRequest {
  image: string;
  name: string;
  pull: PullPolicy;
  quiet: boolean;
  body: CreateBody;
}

export interface CreateBody {
  Image: string;
  Hostname?: string;
  Domainname: string;
  User?: string;
  AttachStdin: boolean;
  AttachStdout: boolean;
  AttachStderr: boolean;
  ExposedPorts?: Record<string, object>;
  Tty: boolean;
  OpenStdin: boolean;
  StdinOnce: boolean;
  Env: string[];
  Cmd?: string[];
  Entrypoint?: string[];
  Volumes?: Record<string, object>;
  WorkingDir?: string;
  OnBuild: null;
  Labels: Record<string, string>;
  StopSignal?: string;
  StopTimeout?: number;
  HostConfig: Record<string, unknown> & { AutoRemove: boolean };
  NetworkingConfig: { EndpointsConfig: Record<string, object> };
}

function flagName(name: string): string {
  const spec = CONTAINER_FLAGS.find((f) => f.name === name);
  return spec?.short ? `-${spec.short}, --${name}` : `--${name}`;
}

/** Reads each value of a flag with `read`, turning its error into the flag error. */
function each<T>(input: Parsed, name: string, read: (v: string) => T): T[] {
  return (input.flags[name] as string[]).map((v) => flagValue(name, v, read));
}

function flagValue<T>(name: string, value: string, read: (v: string) => T): T {
  try {
    return read(value);
  } catch (e) {
    throw new FlagValueError(`invalid argument "${value}" for "${flagName(name)}" flag: ${(e as Error).message}`);
  }
}

function validAttach(v: string): string {
  const s = v.toLowerCase();
  if (!["stdin", "stdout", "stderr"].includes(s)) throw new Error("valid streams are STDIN, STDOUT and STDERR");
  return s;
}

/** An env file's entries; a file that cannot be read is a ConfigError. */
function envFile(path: string, env: NodeJS.ProcessEnv): string[] {
  try {
    return readEnvFile(path, env);
  } catch (e) {
    throw new ConfigError((e as Error).message);
  }
}

export function restartPolicy(value: string): { Name: string; MaximumRetryCount: number } {
  if (value === "") return { Name: "", MaximumRetryCount: 0 };
  const colon = value.indexOf(":");
  const name = colon < 0 ? value : value.slice(0, colon);
  const count = colon < 0 ? "" : value.slice(colon + 1);
  if (colon >= 0 && name === "") throw new ConfigError("invalid restart policy format: no policy provided before colon");
  if (count !== "" && !/^[+-]?\d+$/.test(count)) throw new ConfigError("invalid restart policy format: maximum retry count must be an integer");
  return { Name: name, MaximumRetryCount: count === "" ? 0 : Number(count) };
}

/** `-v SRC:DST[:MODE]` is a bind (a source starting with `.` made absolute); `-v DST` an anonymous volume. */
function volumes(specs: readonly string[]): { binds: string[]; anonymous: string[] } {
  const binds: string[] = [];
  const anonymous: string[] = [];
  for (const spec of specs) {
    if (spec === "") throw new ConfigError("invalid empty volume spec");
    const parts = spec.split(":");
    if (parts.some((p) => p === "")) throw new ConfigError(`invalid spec: ${spec}: empty section between colons`);
    if (parts.length > 3) throw new ConfigError(`invalid spec: ${spec}: too many colons`);
    if (parts.length === 1) {
      anonymous.push(spec);
      continue;
    }
    const [source, ...rest] = parts;
    binds.push(!isAbsolute(source) && source.startsWith(".") ? [resolve(source), ...rest].join(":") : spec);
  }
  return { binds, anonymous };
}

export interface BuildOptions {
  /** `run -d`: nothing is attached. */
  detach: boolean;
  env: NodeJS.ProcessEnv;
  /** The client's terminal size (rows, columns) when stdout is one. */
  consoleSize?: [number, number];
}

export function buildContainerRequest(input: Parsed, opts: BuildOptions): ContainerRequest {
  const f = input.flags;
  const given = (name: string) => input.given.has(name);
  const [image, ...cmd] = input.args;

  const pull = String(f.pull);
  if (!["always", "missing", "never"].includes(pull)) throw new ConfigError(`invalid pull option: '${pull}': must be one of "always", "missing" or "never"`);

  const attach = each(input, "attach", validAttach);
  const env = [...(f["env-file"] as string[]).flatMap((p) => envFile(p, opts.env)), ...each(input, "env", validEnv(opts.env))];
  const ulimits: Ulimit[] = each(input, "ulimit", parseUlimit);
  const memory = given("memory") ? flagValue("memory", String(f.memory), parseBytes) : 0;
  const nanoCpus = given("cpus") ? flagValue("cpus", String(f.cpus), parseNanoCpus) : 0;
  const shmSize = given("shm-size") ? flagValue("shm-size", String(f["shm-size"]), parseBytes) : undefined;

  const interactive = Boolean(f.interactive);
  let attachStdin = attach.includes("stdin") || interactive;
  let attachStdout = attach.includes("stdout") || attach.length === 0;
  let attachStderr = attach.includes("stderr") || attach.length === 0;
  if (opts.detach) {
    // (`run` refuses -a with -d itself, as the Docker CLI does: a plain error, status 1)
    attachStdin = attachStdout = attachStderr = false;
  }

  const exposed: Record<string, object> = {};
  const bindings: Record<string, PortBinding[]> = {};
  for (const raw of f.publish as string[]) {
    let mappings;
    try {
      mappings = parsePublish(raw);
    } catch (e) {
      throw new ConfigError((e as Error).message);
    }
    for (const m of mappings) {
      exposed[m.port] = {};
      (bindings[m.port] ??= []).push(m.binding);
    }
  }
  for (const raw of f.expose as string[]) {
    try {
      for (const port of parseExpose(raw)) exposed[port] = {};
    } catch (e) {
      throw new ConfigError((e as Error).message);
    }
  }

  const restart = restartPolicy(String(f.restart));
  const autoRemove = Boolean(f.rm);
  if (autoRemove && restart.Name !== "" && restart.Name !== "no") throw new ConfigError("conflicting options: cannot specify both --restart and --rm");

  const vols = volumes(f.volume as string[]);
  const logOpts = keyValueMap(f["log-opt"] as string[]);
  const logDriver = String(f["log-driver"]);
  if (logDriver === "none" && Object.keys(logOpts).length > 0) throw new ConfigError(`invalid logging opts for driver ${logDriver}`);

  const entrypoint = f.entrypoint !== "" ? [String(f.entrypoint)] : given("entrypoint") ? [""] : undefined;
  const network = String(f.network) || "default";
  const tty = Boolean(f.tty);

  const hostConfig: CreateBody["HostConfig"] = {
    ...HOST_CONFIG_DEFAULTS,
    Binds: vols.binds,
    LogConfig: { Type: logDriver, Config: logOpts },
    NetworkMode: network,
    PortBindings: bindings,
    RestartPolicy: restart,
    AutoRemove: autoRemove,
    Memory: memory,
    NanoCpus: nanoCpus,
    Ulimits: ulimits,
    Privileged: Boolean(f.privileged),
    ReadonlyRootfs: Boolean(f["read-only"]),
    CapAdd: (f["cap-add"] as string[]).length ? f["cap-add"] : null,
    CapDrop: (f["cap-drop"] as string[]).length ? f["cap-drop"] : null,
    Dns: f.dns,
    ExtraHosts: (f["add-host"] as string[]).length ? f["add-host"] : null,
    Links: (f.link as string[]).length ? f.link : null,
  };
  if (f.runtime !== "") hostConfig.Runtime = String(f.runtime);
  if (given("init")) hostConfig.Init = Boolean(f.init);
  if (given("pids-limit")) hostConfig.PidsLimit = Number(f["pids-limit"]);
  if (shmSize !== undefined) hostConfig.ShmSize = shmSize;
  if ((f.tmpfs as string[]).length) {
    hostConfig.Tmpfs = Object.fromEntries((f.tmpfs as string[]).map((t) => {
      const colon = t.indexOf(":");
      return colon < 0 ? [t, ""] : [t.slice(0, colon), t.slice(colon + 1)];
    }));
  }
  if (tty && opts.consoleSize) hostConfig.ConsoleSize = opts.consoleSize;

  const body: CreateBody = {
    Image: image,
    Hostname: String(f.hostname),
    Domainname: "",
    User: String(f.user),
    AttachStdin: attachStdin,
    AttachStdout: attachStdout,
    AttachStderr: attachStderr,
    Tty: tty,
    OpenStdin: interactive,
    StdinOnce: interactive && attachStdin,
    Env: env,
    WorkingDir: String(f.workdir),
    OnBuild: null,
    Labels: keyValueMap(each(input, "label", validLabel)),
    HostConfig: hostConfig,
    NetworkingConfig: { EndpointsConfig: {} },
  };
  // as the Docker CLI: on a user-defined network the links are the endpoint's too (names its DNS resolves)
  if ((f.link as string[]).length && !["default", "bridge", "host", "none"].includes(network) && !network.startsWith("container:")) {
    body.NetworkingConfig.EndpointsConfig[network] = { Links: [...(f.link as string[])] };
  }
  if (Object.keys(exposed).length) body.ExposedPorts = exposed;
  if (cmd.length) body.Cmd = cmd;
  if (entrypoint) body.Entrypoint = entrypoint;
  if (vols.anonymous.length) body.Volumes = Object.fromEntries(vols.anonymous.map((v) => [v, {}]));
  if (f["stop-signal"] !== "") body.StopSignal = String(f["stop-signal"]);
  if (given("stop-timeout")) body.StopTimeout = Number(f["stop-timeout"]);

  return { image, name: String(f.name), pull: pull as PullPolicy, quiet: Boolean(f.quiet), body };
}
