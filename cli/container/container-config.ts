/**
 * The body of `POST /containers/create` from the flags of `run` and `create`, as the Docker CLI
 * 28 builds it (its `parse`, in the same order, so that the first error is the same): Config
 * (command, environment, labels, ports, health check, attach and TTY settings), HostConfig
 * (binds and mounts, ports, namespaces, security, logging, restart policy; resources in
 * resource-options.ts) and the endpoints (network-options.ts). Every field is sent as the
 * Docker CLI's JSON has it: unset ones zero, empty, or null where Go's are nil. Two kinds of
 * errors: FlagValueError for a value a flag cannot take (a usage error), ConfigError for flags
 * that do not go together or a file that cannot be read.
 */
import { isAbsolute, resolve } from "node:path";
import { invalidArgument, type Parsed } from "../flags.js";
import { CONTAINER_FLAGS } from "./container-flags.js";
import { readEnvFile, readKeyValueFile } from "./env-file.js";
import { healthConfig, type HealthConfig } from "./health-options.js";
import { HOST_CONFIG_DEFAULTS } from "./host-config-defaults.js";
import { parseMount, logrusWarning } from "./mount-options.js";
import { networkConfig, validMac, type EndpointSettings } from "./network-options.js";
import { parseExpose, parsePublish, standardPublish, type PortBinding } from "./ports.js";
import { resourceFields } from "./resource-options.js";
import { namespaceModes, securityOptions, storageOptions } from "./security-options.js";
import { keyValueMap, parseBytes, validEnv } from "./units.js";

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
  /** `--platform` as given ("" for none): parsed when the create is sent, as the Docker CLI does. */
  platform: string;
  /** `--cidfile`: where the new container's id is written. */
  cidFile: string;
  /** `--kernel-memory` in bytes: sent only to the API versions that take it (1.40 and 1.41). */
  kernelMemory: number;
  /** `--use-api-socket`: the daemon's socket and the client's credentials given to the container. */
  useApiSocket: boolean;
  body: CreateBody;
}

export interface CreateBody {
  Image: string;
  Hostname: string;
  Domainname: string;
  User: string;
  AttachStdin: boolean;
  AttachStdout: boolean;
  AttachStderr: boolean;
  ExposedPorts?: Record<string, object>;
  Tty: boolean;
  OpenStdin: boolean;
  StdinOnce: boolean;
  Env: string[] | null;
  Cmd: string[] | null;
  Healthcheck?: HealthConfig;
  Volumes: Record<string, object>;
  WorkingDir: string;
  Entrypoint: string[] | null;
  OnBuild: null;
  Labels: Record<string, string>;
  StopSignal?: string;
  StopTimeout?: number;
  HostConfig: Record<string, unknown> & { AutoRemove: boolean; Binds: string[] | null; Mounts?: object[] };
  NetworkingConfig: { EndpointsConfig: Record<string, EndpointSettings> };
}

function flagName(name: string): string {
  const spec = CONTAINER_FLAGS.find((f) => f.name === name);
  return spec?.short ? `-${spec.short}, --${name}` : `--${name}`;
}

/** Reads each value of a flag with `read`, turning its error into the flag error. */
function each<T>(input: Parsed, name: string, read: (v: string) => T): T[] {
  return (input.flags[name] as string[]).map((v) => {
    try {
      return read(v);
    } catch (e) {
      throw new FlagValueError(invalidArgument(v, flagName(name), (e as Error).message).message);
    }
  });
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
  for (const spec of new Set(specs)) {
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

/** Published and exposed ports: `-p` (short or `published=,target=` form) and `--expose`. */
function ports(publish: readonly string[], expose: readonly string[]): { exposed: Record<string, object>; bindings: Record<string, PortBinding[]> } {
  const exposed: Record<string, object> = {};
  const bindings: Record<string, PortBinding[]> = {};
  for (const m of publish.map(standardPublish).flatMap(parsePublish)) {
    exposed[m.port] = {};
    (bindings[m.port] ??= []).push(m.binding);
  }
  for (const port of expose.flatMap(parseExpose)) exposed[port] = {};
  return { exposed, bindings };
}

/**
 * `--cap-add`/`--cap-drop` as the Docker CLI 28 sends them: upper case, `CAP_` before each name
 * but ALL, once each, sorted; null for none.
 */
function capabilities(list: readonly string[]): string[] | null {
  if (list.length === 0) return null;
  const names = new Set(list.map((c) => c.toUpperCase()).map((c) => (c === "ALL" || c.startsWith("CAP_") ? c : `CAP_${c}`)));
  return [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * `-e` entries once per name (the last value; the Docker CLI goes through a map, so their order
 * is not kept either), then the configured proxies the entries do not set.
 */
function envFlags(entries: readonly string[], proxies: Record<string, string>): string[] {
  const byName = new Map<string, string>();
  for (const e of entries) byName.set(e.split("=")[0], e);
  for (const [name, value] of Object.entries(proxies)) if (!byName.has(name)) byName.set(name, `${name}=${value}`);
  return [...byName.values()];
}

export interface BuildOptions {
  /** `run -d`: nothing is attached. */
  detach: boolean;
  env: NodeJS.ProcessEnv;
  /** The client's terminal size (rows, columns) when stdout is one. */
  consoleSize?: [number, number];
  /** HTTP_PROXY and the others from the client's configuration, for the variables `-e` does not set. */
  proxyEnv?: Record<string, string>;
  /** Where deprecation warnings go (stderr). */
  warn?: (text: string) => void;
}

export function buildContainerRequest(input: Parsed, opts: BuildOptions): ContainerRequest {
  try {
    return build(input, opts);
  } catch (e) {
    if (e instanceof FlagValueError || e instanceof ConfigError) throw e;
    throw new ConfigError((e as Error).message);
  }
}

function build(input: Parsed, opts: BuildOptions): ContainerRequest {
  const f = input.flags;
  const given = (name: string) => input.given.has(name);
  const list = (name: string) => f[name] as string[];
  const text = (name: string) => String(f[name]);
  const [image, ...cmd] = input.args;

  const pull = text("pull");
  if (!["always", "missing", "never"].includes(pull)) throw new ConfigError(`invalid pull option: '${pull}': must be one of "always", "missing" or "never"`);
  const mounts = list("mount").map((m) => parseMount(m, (msg) => opts.warn?.(logrusWarning(msg))));
  // the Docker CLI's order from here: each check in turn, the first failure is the one reported
  const mac = text("mac-address");
  if (mac !== "" && !validMac(mac)) throw new ConfigError(`${mac} is not a valid mac address`);
  const attach = list("attach");
  const interactive = Boolean(f.interactive);
  let attachStdin = attach.includes("stdin") || interactive;
  let attachStdout = attach.includes("stdout") || attach.length === 0;
  let attachStderr = attach.includes("stderr") || attach.length === 0;
  if (opts.detach) {
    // (`run` refuses -a with -d itself, as the Docker CLI does: a plain error, status 1)
    attachStdin = attachStdout = attachStderr = false;
  }
  const swappiness = Number(f["memory-swappiness"]);
  if (swappiness !== -1 && (swappiness < 0 || swappiness > 100)) throw new ConfigError(`invalid value: ${swappiness}. Valid memory swappiness range is 0-100`);
  const vols = volumes(list("volume"));
  const tmpfs = Object.fromEntries(list("tmpfs").map((t) => (t.includes(":") ? [t.slice(0, t.indexOf(":")), t.slice(t.indexOf(":") + 1)] : [t, ""])));
  const entrypoint = text("entrypoint") !== "" ? [text("entrypoint")] : given("entrypoint") ? [""] : null;
  const { exposed, bindings } = ports(list("publish"), list("expose"));
  const resources = resourceFields(input);
  const env = [...list("env-file").flatMap((p) => readEnvFile(p, opts.env)), ...envFlags(each(input, "env", validEnv(opts.env)), opts.proxyEnv ?? {})];
  const labels = [...list("label-file").flatMap((p) => readKeyValueFile(p)), ...list("label")];
  namespaceModes({ pid: text("pid"), uts: text("uts"), userns: text("userns"), cgroupns: text("cgroupns") });
  const restart = restartPolicy(text("restart"));
  const logOpts = keyValueMap(list("log-opt"));
  const logDriver = text("log-driver");
  if (logDriver === "none" && list("log-opt").length > 0) throw new ConfigError(`invalid logging opts for driver ${logDriver}`);
  const security = securityOptions(list("security-opt"));
  const storage = storageOptions(list("storage-opt"));
  const health = healthConfig({
    cmd: text("health-cmd"),
    interval: text("health-interval"),
    timeout: text("health-timeout"),
    startPeriod: text("health-start-period"),
    startInterval: text("health-start-interval"),
    retries: Number(f["health-retries"]),
    none: Boolean(f["no-healthcheck"]),
  });
  const autoRemove = Boolean(f.rm);
  if (autoRemove && restart.Name !== "" && restart.Name !== "no") throw new ConfigError("conflicting options: cannot specify both --restart and --rm");
  const tty = Boolean(f.tty);
  const network = networkConfig({
    networks: list("network"),
    aliases: list("network-alias"),
    links: list("link"),
    ip: text("ip"),
    ip6: text("ip6"),
    mac,
    linkLocalIps: list("link-local-ip"),
  });
  const nullIfEmpty = (name: string) => (list(name).length ? list(name) : null);
  const mapOf = (name: string) => (list(name).length ? keyValueMap(list(name)) : undefined);

  const hostConfig: CreateBody["HostConfig"] = {
    ...HOST_CONFIG_DEFAULTS,
    ...resources,
    Binds: vols.binds.length ? vols.binds : null,
    ContainerIDFile: text("cidfile"),
    LogConfig: { Type: logDriver, Config: logOpts },
    NetworkMode: network.mode,
    PortBindings: bindings,
    RestartPolicy: restart,
    AutoRemove: autoRemove,
    VolumeDriver: text("volume-driver"),
    VolumesFrom: nullIfEmpty("volumes-from"),
    CapAdd: capabilities(list("cap-add")),
    CapDrop: capabilities(list("cap-drop")),
    CgroupnsMode: text("cgroupns"),
    Dns: list("dns"),
    DnsOptions: list("dns-option"),
    DnsSearch: list("dns-search"),
    ExtraHosts: nullIfEmpty("add-host"),
    GroupAdd: nullIfEmpty("group-add"),
    IpcMode: text("ipc"),
    Links: nullIfEmpty("link"),
    OomScoreAdj: Number(f["oom-score-adj"]),
    PidMode: text("pid"),
    Privileged: Boolean(f.privileged),
    PublishAllPorts: Boolean(f["publish-all"]),
    ReadonlyRootfs: Boolean(f["read-only"]),
    SecurityOpt: security.securityOpt,
    UTSMode: text("uts"),
    UsernsMode: text("userns"),
    ShmSize: given("shm-size") ? parseBytes(text("shm-size")) : 0,
    Isolation: text("isolation"),
    MaskedPaths: security.maskedPaths,
    ReadonlyPaths: security.readonlyPaths,
  };
  const optional: Record<string, unknown> = {
    Annotations: mapOf("annotation"),
    StorageOpt: storage ?? undefined,
    Tmpfs: Object.keys(tmpfs).length ? tmpfs : undefined,
    Sysctls: mapOf("sysctl"),
    Runtime: text("runtime") || undefined,
    Mounts: mounts.length ? mounts : undefined,
    Init: given("init") ? Boolean(f.init) : undefined,
  };
  for (const [k, v] of Object.entries(optional)) if (v !== undefined) hostConfig[k] = v;
  // the terminal's size whenever stdout is one, -t or not, as the Docker CLI sends it
  if (opts.consoleSize) hostConfig.ConsoleSize = opts.consoleSize;

  const body: CreateBody = {
    Image: image,
    Hostname: text("hostname"),
    Domainname: text("domainname"),
    User: text("user"),
    AttachStdin: attachStdin,
    AttachStdout: attachStdout,
    AttachStderr: attachStderr,
    Tty: tty,
    OpenStdin: interactive,
    StdinOnce: interactive && attachStdin,
    Env: env.length ? env : null,
    Cmd: cmd.length ? cmd : null,
    Volumes: Object.fromEntries(vols.anonymous.map((v) => [v, {}])),
    WorkingDir: text("workdir"),
    Entrypoint: entrypoint,
    OnBuild: null,
    Labels: keyValueMap(labels),
    HostConfig: hostConfig,
    NetworkingConfig: { EndpointsConfig: network.endpoints },
  };
  if (health) body.Healthcheck = health;
  if (Object.keys(exposed).length) body.ExposedPorts = exposed;
  if (text("stop-signal") !== "") body.StopSignal = text("stop-signal");
  if (given("stop-timeout")) body.StopTimeout = Number(f["stop-timeout"]);

  return {
    image,
    name: text("name"),
    pull: pull as PullPolicy,
    quiet: Boolean(f.quiet),
    platform: text("platform"),
    cidFile: text("cidfile"),
    kernelMemory: text("kernel-memory") === "" ? 0 : parseBytes(text("kernel-memory")),
    useApiSocket: Boolean(f["use-api-socket"]),
    body,
  };
}
