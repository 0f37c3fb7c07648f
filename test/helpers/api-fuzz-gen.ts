/**
 * The API fuzz's request generator (test/api-fuzz.test.ts): for a route the daemon serves
 * (`POST /containers/:id/start`, from the daemon's own route table), one request with its path
 * parameters, query, headers and body bent in the ways a client gets them wrong. What is known
 * about a route (its query parameters and their kinds, its body) is below; a route not listed
 * gets every known parameter name and every kind of body, so a new route is fuzzed as soon as
 * it is served.
 *
 * Safety: the daemon under test runs without a network (its own namespace), the only registry
 * ever named is `FUZZ_REGISTRY` (nothing listens there), and what a container could do to the
 * host is kept out of reach: binds and mounts name only the run's scratch folder or named
 * volumes, and commands come from a harmless list.
 */
import type { ArchivePool } from "./fuzz-archives.js";
import { breakJson, garbleBytes, jsonText, mutateJson, randomBytes, weirdBool, weirdJson, weirdNumber, weirdString, type Rng } from "./fuzz-values.js";

/** The one registry a fuzzed request may name: a closed port in a namespace without a network. */
export const FUZZ_REGISTRY = "127.0.0.1:1";

export interface FuzzWorld {
  /** Names and ids of what exists (the test's fixtures), by kind. */
  known: Record<IdKind, string[]>;
  /** A host folder of the test's: the only host path binds and mounts name. */
  scratch: string;
  archives: ArchivePool;
}

export interface FuzzRequest {
  index: number;
  method: string;
  /** The route pattern it was made for. */
  route: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** Sent in chunks, without a Content-Length. */
  chunked: boolean;
}

type IdKind = "container" | "image" | "volume" | "network" | "exec";
type Kind =
  | "bool" | "int" | "string" | "ref" | "tag" | "outbound-ref" | "filters" | "signal" | "time" | "path" | "platform" | "change"
  | "search-term" | "condition" | "detach-keys" | "ps-args" | "string-map" | "string-list" | "dockerfile" | "remote" | "network-mode" | "from-src" | "name";
type BodyKind =
  | "none" | "container-create" | "container-update" | "exec-create" | "exec-start" | "network-create" | "network-connect" | "volume-create"
  | "auth" | "container-config" | "swarm" | "context" | "layer" | "image-archive";

interface RouteSpec {
  query?: Record<string, Kind>;
  /** Parameters always sent: without them the request names the default registry (a search of Docker Hub). */
  required?: string[];
  body?: BodyKind;
  /** What may follow the name in a `*` route (`json` in `/images/*`). */
  actions?: string[];
}

const STOP = { t: "int", signal: "signal" } as const;
const SIZE = { h: "int", w: "int" } as const;

/** What is known of each route; keys are `METHOD pattern` as the daemon's route table names them. */
const ROUTES: Record<string, RouteSpec> = {
  "GET /events": { query: { since: "time", until: "time", filters: "filters" } },
  "GET /images/json": { query: { all: "bool", digests: "bool", "shared-size": "bool", manifests: "bool", filters: "filters" } },
  "GET /images/get": { query: { names: "ref", platform: "platform" } },
  "POST /images/load": { query: { quiet: "bool", platform: "platform" }, body: "image-archive" },
  "POST /images/create": {
    query: { fromImage: "outbound-ref", fromSrc: "from-src", repo: "ref", tag: "tag", message: "string", changes: "change", platform: "platform" },
    body: "layer",
  },
  "POST /images/prune": { query: { filters: "filters" } },
  "GET /images/*": { actions: ["json", "history", "get"] },
  "POST /images/*": { query: { repo: "ref", tag: "tag" }, actions: ["tag", "push"] },
  "DELETE /images/*": { query: { force: "bool", noprune: "bool" }, actions: [] },
  "GET /images/search": { query: { term: "search-term", limit: "int", filters: "filters" }, required: ["term"] },
  "GET /distribution/*": { actions: ["json"] },
  "POST /auth": { body: "auth" },
  "POST /build": {
    query: {
      dockerfile: "dockerfile", t: "ref", extrahosts: "string", remote: "remote", q: "bool", nocache: "bool", cachefrom: "string-list", pull: "bool",
      rm: "bool", forcerm: "bool", memory: "int", memswap: "int", cpushares: "int", cpusetcpus: "string", cpuperiod: "int", cpuquota: "int",
      buildargs: "string-map", shmsize: "int", labels: "string-map", networkmode: "network-mode", platform: "platform", target: "string", version: "int",
    },
    body: "context",
  },
  "POST /commit": { query: { container: "name", repo: "ref", tag: "tag", comment: "string", author: "string", pause: "bool", changes: "change" }, body: "container-config" },
  "POST /containers/create": { query: { name: "name", platform: "platform" }, body: "container-create" },
  "GET /containers/json": { query: { all: "bool", limit: "int", size: "bool", filters: "filters" } },
  "GET /containers/:id/json": { query: { size: "bool" } },
  "GET /containers/*": { query: { size: "bool" }, actions: ["json"] },
  "DELETE /containers/*": { query: { force: "bool", v: "bool", link: "bool" }, actions: [] },
  "POST /containers/prune": { query: { filters: "filters" } },
  "POST /containers/:id/start": { query: { detachKeys: "detach-keys" } },
  "POST /containers/:id/stop": { query: STOP },
  "POST /containers/:id/restart": { query: STOP },
  "POST /containers/:id/kill": { query: { signal: "signal" } },
  "POST /containers/:id/wait": { query: { condition: "condition" } },
  "GET /containers/:id/logs": {
    query: { stdout: "bool", stderr: "bool", follow: "bool", since: "time", until: "time", timestamps: "bool", tail: "int", details: "bool" },
  },
  "POST /containers/:id/resize": { query: SIZE },
  "POST /containers/:id/attach": { query: { stream: "bool", logs: "bool", stdin: "bool", stdout: "bool", stderr: "bool", detachKeys: "detach-keys" } },
  "GET /containers/:id/attach/ws": { query: { stream: "bool", logs: "bool", stdin: "bool", stdout: "bool", stderr: "bool", detachKeys: "detach-keys" } },
  "POST /containers/:id/rename": { query: { name: "name" } },
  "POST /containers/:id/update": { body: "container-update" },
  "GET /containers/:id/top": { query: { ps_args: "ps-args" } },
  "GET /containers/:id/stats": { query: { stream: "bool", "one-shot": "bool" } },
  "POST /containers/:id/exec": { body: "exec-create" },
  "POST /exec/:id/start": { body: "exec-start" },
  "POST /exec/:id/resize": { query: SIZE },
  "HEAD /containers/:id/archive": { query: { path: "path" } },
  "GET /containers/:id/archive": { query: { path: "path" } },
  "PUT /containers/:id/archive": { query: { path: "path", noOverwriteDirNonDir: "bool", copyUIDGID: "bool" }, body: "layer" },
  "GET /networks": { query: { filters: "filters" } },
  "GET /networks/:id": { query: { verbose: "bool", scope: "string" } },
  "POST /networks/create": { body: "network-create" },
  "POST /networks/:id/connect": { body: "network-connect" },
  "POST /networks/:id/disconnect": { body: "network-connect" },
  "POST /networks/prune": { query: { filters: "filters" } },
  "POST /volumes/create": { body: "volume-create" },
  "GET /volumes": { query: { filters: "filters" } },
  "DELETE /volumes/:name": { query: { force: "bool" } },
  "POST /volumes/prune": { query: { filters: "filters" } },
  // managed plugins: a remote is only ever the fuzz's registry (a valid name alone is Docker Hub's)
  "GET /plugins": { query: { filters: "filters" } },
  "GET /plugins/*": { actions: ["json"] },
  "GET /plugins/privileges": { query: { remote: "outbound-ref" } },
  "POST /plugins/pull": { query: { remote: "outbound-ref", name: "ref" } },
  "POST /plugins/create": { query: { name: "ref" } },
  "POST /plugins/*": { query: { remote: "outbound-ref", timeout: "int", force: "bool" }, actions: ["set", "enable", "disable", "push", "upgrade"] },
  "DELETE /plugins/*": { query: { force: "bool" }, actions: [] },
};

/** Every parameter named above with its kind: what an unknown route gets. */
const ANY_QUERY: Record<string, Kind> = Object.assign({}, ...Object.values(ROUTES).map((r) => r.query ?? {}), { version: "int", stdout: "bool", stderr: "bool" });

const SAFE_COMMANDS = [["true"], ["sleep", "1"], ["echo", "fz"], ["sh", "-c", "exit 3"], ["/nonexistent"], ["cat"], ["sleep", "30"]];
const FILTER_KEYS = [
  "label", "label!", "until", "dangling", "driver", "id", "name", "scope", "type", "reference", "before", "since", "status", "ancestor", "exited",
  "health", "isolation", "is-task", "network", "publish", "expose", "volume", "event", "container", "image", "daemon", "is-automated", "is-official",
  "stars", "all",
];

/** Kinds that name a place the daemon would reach: only the fuzz's registry, or names that cannot be valid. */
const OUTBOUND: readonly Kind[] = ["outbound-ref", "from-src", "search-term"];

/** The value of a query parameter: half the time one a client could mean, half the time not. */
function queryValue(rng: Rng, kind: Kind, world: FuzzWorld): string {
  if (!OUTBOUND.includes(kind) && rng.chance(0.25)) return weirdString(rng);
  const good = rng.chance(0.5);
  switch (kind) {
    case "bool": return good ? rng.pick(["1", "0", "true", "false"]) : weirdBool(rng);
    case "int": return good ? rng.pick(["0", "1", "10", "24"]) : weirdNumber(rng);
    case "signal": return good ? rng.pick(["SIGTERM", "KILL", "9", "HUP", "SIGUSR1"]) : rng.pick(["SIGFOO", "-1", "999", "0", "SIG", "sigkill", "SIGRTMAX+1", weirdNumber(rng)]);
    case "time": return good ? rng.pick([`${Math.floor(Date.now() / 1000)}`, "0", "2020-01-01T00:00:00Z", "1.5", "1700000000.123456789"]) : rng.pick(["yesterday", "10m", "-1", "1.2.3", "2020-13-45T99:99:99Z", weirdNumber(rng)]);
    case "filters": return filters(rng);
    case "path": return good ? rng.pick(["/", "/tmp", "/etc/hostname", "tmp", "/nonexistent", "/fz", "/tmp/", "/proc/self"]) : rng.pick(["../../../..", "/../../etc", "/tmp/../../..", "\u0000", "/dev/zero", "/proc/1/root"]);
    case "platform": return good ? rng.pick(["linux/amd64", "linux", "linux/arm64"]) : rng.pick(["windows/amd64", "linux/arm/v7/x", "", "/", "linux/", "a/b/c/d"]);
    case "change": return good ? rng.pick(["CMD true", "ENV A=1", "EXPOSE 80", "LABEL a=b", "WORKDIR /x", "USER nobody"]) : rng.pick(["RUN true", "FROM x", "CMD", "ENV", "LABEL =", "EXPOSE 99999", "BOGUS x", "CMD [\"unterminated"]);
    case "condition": return good ? rng.pick(["not-running", "next-exit", "removed"]) : rng.pick(["running", "NEXT-EXIT", "exited"]);
    case "detach-keys": return good ? rng.pick(["ctrl-p,ctrl-q", "ctrl-a", "a,b"]) : rng.pick(["ctrl-", "ctrl-ü", ",", "ctrl-p,,", "ctrl-[,ctrl-@"]);
    case "ps-args": return good ? rng.pick(["-ef", "aux", "-o pid,comm"]) : rng.pick(["--garbage", "-e -o %%%", "-p -1", "--sort=bogus"]);
    case "string-map": return good ? rng.pick(['{"A":"1"}', "{}", "null", '{"A":null}']) : jsonOrBroken(rng, { A: 1 });
    case "string-list": return good ? rng.pick(['["fz-base"]', "[]", "null"]) : jsonOrBroken(rng, ["a", 1]);
    case "dockerfile": return good ? rng.pick(["Dockerfile", "sub/Dockerfile", "a"]) : rng.pick(["../../../../etc/passwd", "/etc/passwd", "Dockerfile\u0000", "nonexistent", ".", "/"]);
    case "remote": return good ? rng.pick([`http://${FUZZ_REGISTRY}/x.tar`, `git://${FUZZ_REGISTRY}/x.git`, `https://${FUZZ_REGISTRY}/x.git#main:dir`]) : rng.pick(["ftp://x", "file:///etc", "-", "::", "http://", "git@:x", "client-session"]);
    case "network-mode": return good ? rng.pick(["default", "none", "host", "bridge", "container:fz-run", "fz-net-1"]) : rng.pick(["container:", "container:nonexistent", "ns:/proc/1/ns/net"]);
    case "from-src": return good ? rng.pick(["-", `http://${FUZZ_REGISTRY}/x.tar`]) : rng.pick(["file:///etc/passwd", "::", "/etc/passwd", "--", "http://[::1", "ftp://x/y", "http://", "http://a b/", "-x-", "a..b"]);
    // a term names its registry before a slash; without one it is Docker Hub's
    case "search-term": return `${FUZZ_REGISTRY}/${good ? rng.pick(["fz", "a-b", ""]) : weirdString(rng)}`;
    case "ref": return good ? rng.pick(["fz-base", "fz-base:latest", "fz-new", `fz-tag:${rng.int(9)}`, ...world.known.image]) : badRef(rng, false);
    case "tag": return good ? rng.pick(["latest", "1", "v1.0"]) : rng.pick(["", ":", "-x", "a".repeat(129), "UPPER_ok", "sha256:0", "a/b"]);
    case "outbound-ref": return good ? fuzzRegistryRef(rng) : badRef(rng, false);
    case "name": return good ? rng.pick([...world.known.container, `fz-c-${rng.int(20)}`]) : rng.pick(["/fz", "a b", "..", "-x", "x/y", "é", `fz-${"x".repeat(300)}`]);
    case "string": return good ? rng.pick(["fz", "a=b", "x"]) : weirdString(rng);
  }
}

/** A valid name at the fuzz's registry. */
function fuzzRegistryRef(rng: Rng): string {
  return `${FUZZ_REGISTRY}/fz/${rng.pick(["a", "b-c", "d.e"])}${rng.pick(["", ":1", ":latest"])}`;
}

/**
 * A name that is not a valid reference whatever it is mixed with: upper case in a repository, a
 * bad digest or tag, climbing components. (A valid name with no registry would send a pull to
 * the default registry.) In a path, empty segments are out: the router drops doubled and
 * trailing slashes, which would leave a valid name.
 */
function badRef(rng: Rng, inPath: boolean): string {
  const base = `${FUZZ_REGISTRY}/fz/${rng.pick(["a", "b"])}`;
  const anywhere = [
    `${base}/UPPER`, `${base}@sha256:123`, `${base}/../x`, `${base}:${"t".repeat(200)}`, `${base}:-tag`, `${base}/${"a".repeat(300)}`, `${base}/a\u0000b`,
    `${base}/ü`, `${base}/a b`, "UPPER", "-x", "a:b:c@d", `${base}/.`, `${base}/-`,
  ];
  return rng.pick(inPath ? anywhere : [...anywhere, `${base}/`, `/${base}`, `${FUZZ_REGISTRY}/`, "", ":", "@", `${base}//x`]);
}

function jsonOrBroken(rng: Rng, value: unknown): string {
  const text = jsonText(mutateJson(rng, value, 0.5));
  return rng.chance(0.5) ? text : breakJson(rng, text).toString("latin1");
}

/** `filters`: JSON in either of Docker's forms, with keys and values that fit, do not, or do not parse. */
function filters(rng: Rng): string {
  const key = rng.chance(0.8) ? rng.pick(FILTER_KEYS) : weirdString(rng);
  const value = rng.pick(["a=b", "a", "true", "1", "maybe", "fz-base", "[[[", "*", "exited", "healthy", "2020-01-01", "10m", "-1", weirdString(rng)]);
  const shape = rng.pick([{ [key]: [value] }, { [key]: { [value]: true } }, { [key]: value }, { [key]: [1, null] }, [key], key, null, {}]);
  return rng.chance(0.8) ? jsonText(shape) : breakJson(rng, jsonText(shape)).toString("latin1");
}

/** The bodies a client could mean, before they are bent. */
function template(rng: Rng, kind: BodyKind, world: FuzzWorld): unknown {
  const n = rng.int(20);
  switch (kind) {
    case "container-create":
      return {
        Image: rng.pick(["fz-base", "fz-base:latest", ...world.known.image, "fz-nonexistent", `${FUZZ_REGISTRY}/fz/a`]),
        Cmd: rng.pick(SAFE_COMMANDS),
        Env: ["A=1"],
        Labels: { fz: "1" },
        Tty: rng.chance(0.2),
        OpenStdin: rng.chance(0.2),
        ExposedPorts: { "80/tcp": {} },
        Volumes: { "/data": {} },
        WorkingDir: "/",
        User: rng.pick(["root", "nobody", "0:0"]),
        StopSignal: "SIGTERM",
        Healthcheck: { Test: ["CMD", "true"], Interval: 1_000_000_000, Retries: 1 },
        HostConfig: {
          Binds: rng.pick([[], [`${world.scratch}:/mnt`], [`${world.scratch}:/mnt:ro`], [`fz-vol-${n}:/data`], ["relative:/x"], [`${world.scratch}:relative`]]),
          Memory: rng.pick([0, 64 * 1024 * 1024]),
          RestartPolicy: { Name: rng.pick(["no", "on-failure", "always", "unless-stopped"]), MaximumRetryCount: 0 },
          PortBindings: { "80/tcp": [{ HostIp: "127.0.0.1", HostPort: "" }] },
          NetworkMode: rng.pick(["default", "none", "bridge", "host", `fz-net-${n}`, "container:fz-run"]),
          LogConfig: { Type: rng.pick(["json-file", "local", "none"]), Config: { "max-size": "1k" } },
          Tmpfs: { "/run": "size=1m" },
          Ulimits: [{ Name: "nofile", Soft: 1024, Hard: 2048 }],
          CapAdd: ["NET_ADMIN"],
          AutoRemove: rng.chance(0.3),
        },
        NetworkingConfig: { EndpointsConfig: {} },
      };
    case "container-update":
      return { Memory: 64 * 1024 * 1024, MemorySwap: -1, CpuShares: 512, PidsLimit: 100, BlkioWeight: 300, RestartPolicy: { Name: "on-failure", MaximumRetryCount: 2 } };
    case "exec-create":
      return { Cmd: rng.pick(SAFE_COMMANDS), AttachStdout: true, AttachStderr: true, AttachStdin: rng.chance(0.3), Tty: rng.chance(0.3), Env: ["A=1"], User: "root", WorkingDir: "/", DetachKeys: "ctrl-p,ctrl-q" };
    case "exec-start":
      return { Detach: rng.chance(0.5), Tty: rng.chance(0.3), ConsoleSize: [24, 80] };
    case "network-create":
      return {
        Name: `fz-net-${n}`, Driver: rng.pick(["bridge", "null", "host", "fz-driver"]), Internal: false, Attachable: true, EnableIPv6: false, Labels: { fz: "1" },
        IPAM: { Driver: "default", Config: [{ Subnet: `10.213.${n}.0/24`, Gateway: `10.213.${n}.1`, IPRange: `10.213.${n}.128/25` }], Options: {} },
        Options: { "com.docker.network.bridge.name": `fzbr${n}` },
      };
    case "network-connect":
      return { Container: rng.pick([...world.known.container, "fz-nonexistent"]), Force: rng.chance(0.5), EndpointConfig: { IPAMConfig: { IPv4Address: `10.213.${n}.5` }, Aliases: ["a"] } };
    case "volume-create":
      return { Name: `fz-vol-${n}`, Driver: rng.pick(["local", "fz-driver"]), DriverOpts: rng.pick([{}, { type: "tmpfs", device: "tmpfs", o: "size=1m" }, { size: "1m" }]), Labels: { fz: "1" } };
    case "auth": {
      // in both spellings: a key broken in one (bytes that are no UTF-8) leaves the other naming it
      const address = rng.pick([FUZZ_REGISTRY, `http://${FUZZ_REGISTRY}/`, `https://${FUZZ_REGISTRY}/v1/`, "a b", "\u0000", "../x", "ftp://:x", "[::1", `${FUZZ_REGISTRY}:2`, "-x-"]);
      return { username: "fz", password: "secret", email: "", serveraddress: address, ServerAddress: address };
    }
    case "container-config":
      return rng.chance(0.2) ? null : { Cmd: rng.pick(SAFE_COMMANDS), Env: ["A=1"], Labels: { fz: "1" }, ExposedPorts: { "80/tcp": {} } };
    case "swarm":
      return { ListenAddr: "0.0.0.0:2377", Name: "fz", Spec: { Name: "fz" }, Version: { Index: 1 } };
    default:
      return {};
  }
}

/** Fields whose values are never bent: they name host paths or commands (see the safety note above), or a login's registry. */
const FROZEN = ["Binds", "Mounts", "Devices", "CgroupParent", "Cmd", "Entrypoint", "Test", "Shell", "serveraddress", "ServerAddress"];

function freezeMerge(bent: unknown, original: unknown): unknown {
  if (!bent || typeof bent !== "object" || Array.isArray(bent) || !original || typeof original !== "object" || Array.isArray(original)) return bent;
  const out = { ...(bent as Record<string, unknown>) };
  for (const [k, v] of Object.entries(original as Record<string, unknown>)) {
    if (FROZEN.includes(k) && k in out) out[k] = v;
    else if (k in out) out[k] = freezeMerge(out[k], v);
  }
  return out;
}

const JSON_TYPES = ["application/json", "application/json; charset=utf-8", "application/JSON", "application/json; charset=latin1", "application/json, text/plain"];
const OTHER_TYPES = ["text/plain", "application/x-tar", "application/octet-stream", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded", "a/b/c", ";;;", "application/gzip"];

function body(rng: Rng, kind: BodyKind, world: FuzzWorld): { data?: Buffer; type?: string } {
  const archives = kind === "context" ? world.archives.contexts : kind === "layer" ? world.archives.layers : kind === "image-archive" ? world.archives.images : undefined;
  const jsonType = () => (rng.chance(0.8) ? "application/json" : rng.pick([...JSON_TYPES, ...OTHER_TYPES, ""]));
  if (archives) {
    const tarType = () => (rng.chance(0.7) ? "application/x-tar" : rng.pick([...OTHER_TYPES, ...JSON_TYPES, ""]));
    return rng.weighted<{ data?: Buffer; type?: string }>([
      [4, () => ({ data: rng.pick(archives), type: tarType() })],
      [4, () => ({ data: garbleBytes(rng, rng.pick(archives)), type: tarType() })],
      [1, () => ({ data: Buffer.from(jsonText(weirdJson(rng))), type: jsonType() })],
      [1, () => ({})],
    ]);
  }
  const shape = template(rng, kind === "none" ? rng.pick<BodyKind>(["container-create", "swarm", "auth", "exec-start"]) : kind, world);
  return rng.weighted<{ data?: Buffer; type?: string }>([
    [kind === "none" ? 1 : 2, () => ({ data: Buffer.from(jsonText(shape)), type: jsonType() })],
    [kind === "none" ? 2 : 8, () => ({ data: Buffer.from(jsonText(freezeMerge(mutateJson(rng, shape, rng.pick([0.05, 0.2, 0.5]), FROZEN), shape))), type: jsonType() })],
    [3, () => ({ data: breakJson(rng, jsonText(shape)), type: jsonType() })],
    [1, () => ({ data: Buffer.from(jsonText(rng.pick([[], "x", 1, true, null, [shape]]))), type: jsonType() })],
    [1, () => ({ data: garbleBytes(rng, rng.pick(world.archives.layers)), type: rng.pick([...OTHER_TYPES, "application/json"]) })],
    [1, () => ({ data: Buffer.alloc(rng.chance(0.02) ? 33 * 1024 * 1024 : 0, 0x20), type: jsonType() })],
    [kind === "none" ? 6 : 1, () => ({})],
  ]);
}

/** A path parameter: something that exists, something that could, or something that cannot. */
function idValue(rng: Rng, kind: IdKind | "any", world: FuzzWorld): string {
  const known = kind === "any" ? Object.values(world.known).flat() : world.known[kind];
  return rng.weighted<string>([
    [known.length ? 4 : 0, () => rng.pick(known)],
    [1, () => (known.length ? rng.pick(known).slice(0, 12) : rng.hex(12))],
    [2, () => `fz-${kind === "any" ? "c" : kind[0]}-${rng.int(20)}`],
    [1, () => rng.hex(rng.pick([64, 12, 3]))],
    [4, () => weirdString(rng)],
  ]);
}

/** Percent-encodes a path segment; some segments go raw, as broken encodings a client might send. */
function encodeSegment(rng: Rng, text: string): string {
  if (rng.chance(0.08)) return rng.pick(["%ff", "%", "%zz", "..", "%2F", "a%00b", "%c0%ae%c0%ae", ".", "%2e%2e"]);
  try {
    return encodeURIComponent(text);
  } catch {
    return "%ff";
  }
}

function idKindOf(pattern: string): IdKind | "any" {
  const first = pattern.split("/")[1];
  return ({ containers: "container", exec: "exec", networks: "network", volumes: "volume", images: "image" } as Record<string, IdKind>)[first] ?? "any";
}

/**
 * The path: each `:param` and `*` filled, an API version in front now and then. A name that the
 * daemon would look for at a registry (`/distribution/...`, a push) is the fuzz's registry's or
 * one that cannot be valid; its segments are encoded but never broken (a broken one could
 * decode to a valid name of the default registry).
 */
function fillPath(rng: Rng, pattern: string, spec: RouteSpec, world: FuzzWorld): string {
  const kind = idKindOf(pattern);
  let path = pattern.replace(/:[A-Za-z]+/g, () => encodeSegment(rng, idValue(rng, kind, world)));
  if (path.endsWith("*")) {
    const actions = spec.actions ?? ["json", weirdString(rng)];
    const action = actions.length && rng.chance(0.85) ? rng.pick(actions) : rng.chance(0.5) ? undefined : weirdString(rng);
    const outbound = pattern.startsWith("/distribution/") || (pattern.startsWith("/images/") && (action === "push" || rng.chance(0.3)));
    const name = outbound ? (rng.chance(0.5) ? fuzzRegistryRef(rng) : badRef(rng, true)) : idValue(rng, kind, world);
    const segments = name.split("/").map((s) => (outbound ? encodeURIComponent(s) : encodeSegment(rng, s)));
    path = path.slice(0, -1) + [...segments, ...(action === undefined ? [] : [encodeSegment(rng, action)])].join("/");
  }
  const version = rng.chance(0.2) ? rng.pick(["/v1.51", "/v1.24", "/v1.44", "/v1.0", "/v9.99", "/v1.5x", "/vabc", "/v1.51/v1.51", "/v"]) : "";
  return `${version}${path}`;
}

function queryString(rng: Rng, spec: RouteSpec, world: FuzzWorld): string {
  const known = spec.query ?? {};
  const params: string[] = [];
  const required = spec.required ?? [];
  const add = (name: string, value: string) =>
    params.push(`${encodeURIComponent(name)}=${!required.includes(name) && rng.chance(0.05) ? rng.pick(["%ff", "%", "%zz%"]) : encodeURIComponent(value)}`);
  // a route not listed gets a few of every known parameter; a listed one about a third of its own
  const share = spec.body === undefined && spec.query === ANY_QUERY ? 4 / Object.keys(ANY_QUERY).length : 0.35;
  for (const [name, kind] of Object.entries(known)) {
    if (!required.includes(name) && !rng.chance(share)) continue;
    add(name, queryValue(rng, kind, world));
    if (rng.chance(0.08)) add(name, queryValue(rng, kind, world));
  }
  if (rng.chance(0.15)) {
    const [name, kind] = rng.pick(Object.entries(ANY_QUERY));
    add(rng.chance(0.5) ? name : weirdString(rng), queryValue(rng, kind, world));
  }
  if (rng.chance(0.03)) params.push(rng.pick(["&&==", "a", "=1", "%00=%00", "a[b]=1", "__proto__=1", "constructor[prototype][x]=1", `x=${"y".repeat(20_000)}`]));
  return params.length ? `?${params.join("&")}` : "";
}

function authHeader(rng: Rng): string {
  const b64 = (text: string) => Buffer.from(text).toString(rng.chance(0.5) ? "base64" : "base64url");
  return rng.pick([
    b64(JSON.stringify({ username: "fz", password: "secret", serveraddress: FUZZ_REGISTRY })),
    b64("not json"), b64("[]"), b64("null"), b64('{"username":1}'), "!!!", "e30=", "", "x".repeat(9000), b64(JSON.stringify({ [FUZZ_REGISTRY]: 5 })),
  ]);
}

/** One request for a route (`METHOD pattern`); `index` is its place in the run (its random source's too). */
export function fuzzRequest(rng: Rng, index: number, route: string, world: FuzzWorld): FuzzRequest {
  const [method, pattern] = route.split(" ");
  // a HEAD route Fastify made for a GET one takes what the GET takes
  const spec = ROUTES[route] ?? ROUTES[route.replace(/^HEAD /, "GET ")] ?? { query: ANY_QUERY };
  const headers: Record<string, string> = {};
  const { data, type } = body(rng, spec.body ?? "none", world);
  if (type) headers["content-type"] = type;
  if (rng.chance(0.1)) headers["x-registry-auth"] = authHeader(rng);
  if (pattern === "/build" && rng.chance(0.2)) headers["x-registry-config"] = authHeader(rng);
  if (/attach|\/start$/.test(pattern) && rng.chance(0.3)) Object.assign(headers, { connection: "Upgrade", upgrade: rng.pick(["tcp", "h2c", "websocket"]) });
  // a whole WebSocket handshake at times (the attachment over a WebSocket opens then)
  if (headers.upgrade === "websocket" && rng.chance(0.5)) Object.assign(headers, { "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-version": rng.pick(["13", "8"]) });
  return {
    index,
    method,
    route,
    path: fillPath(rng, pattern, spec, world) + queryString(rng, spec, world),
    headers,
    body: method === "GET" || method === "HEAD" ? (rng.chance(0.05) ? randomBytes(rng, 64) : undefined) : data,
    chunked: rng.chance(0.1),
  };
}

/** The route of a request: those that take a body (where most client errors are) come three times as often. */
export function pickRoute(rng: Rng, routes: readonly string[]): string {
  return rng.pick(routes.flatMap((r) => (ROUTES[r]?.body ? [r, r, r] : [r])));
}
