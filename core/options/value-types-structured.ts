/**
 * Value types with structure: sizes in bytes, nested maps, ulimits, runtimes, features, the
 * builder's garbage collection. Their file forms are checked with typia validators made from
 * the TypeScript types below, so that the type is the schema.
 */
import typia from "typia";
import { policyFilters, pruneRule } from "../build/cache-rules.js";
import { typiaProblem } from "./value-types-net.js";
import { describeJson, recordOf, ValueError, type ValueType } from "./value-types.js";

// --- bytes -------------------------------------------------------------------------------------

const UNITS: Record<string, number> = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4, p: 1024 ** 5 };

/** Docker's RAMInBytes: `64m`, `64MiB`, `1g`, `1.5G`, `512k`, `100` (bytes); 1024-based. */
export function parseBytes(raw: string): number {
  const m = /^(\d+(?:\.\d+)?) ?([kmgtp])?(i)?(b)?$/i.exec(raw.trim());
  if (!m || (m[3] && !m[2])) throw new ValueError("expected a size such as 64m, 64MiB or 1g");
  return Math.round(Number(m[1]) * UNITS[(m[2] ?? "").toLowerCase()]);
}

export function showBytes(n: number): string {
  for (const [unit, size] of [["PiB", 1024 ** 5], ["TiB", 1024 ** 4], ["GiB", 1024 ** 3], ["MiB", 1024 ** 2], ["KiB", 1024]] as const) {
    if (n >= size && n % size === 0) return `${n / size}${unit}`;
  }
  return `${n}B`;
}

export const bytes: ValueType<number> = {
  name: "bytes",
  parse: (raw) => parseBytes(raw),
  fromFile(value) {
    if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return value;
    if (typeof value === "string") return parseBytes(value);
    throw new ValueError(`expected a size string such as "64M", got ${describeJson(value)}`);
  },
  toFile: (v) => showBytes(v),
  show: (v) => showBytes(v),
};

// --- driver=option=value -------------------------------------------------------------------------

export type MapMap = Record<string, Record<string, string>>;
const validateMapMap = typia.createValidate<MapMap>();

/** `--default-network-opt bridge=com.engine.network.driver.mtu=1400` (repeatable). */
export const mapMap: ValueType<MapMap> = {
  name: "mapmap",
  repeatable: true,
  parse(raw, previous) {
    const m = /^([^=]+)=([^=]+)=(.*)$/.exec(raw);
    if (!m) throw new ValueError("expected <driver>=<option>=<value>");
    const out = structuredClone(previous ?? {});
    out[m[1]] = { ...out[m[1]], [m[2]]: m[3] };
    return out;
  },
  fromFile(value) {
    const checked = validateMapMap(value);
    if (!checked.success) throw new ValueError(typiaProblem(checked.errors, "an object of driver name to an object of strings"));
    return structuredClone(checked.data);
  },
  toFile: (v) => v,
  show: (v) => `map[${Object.entries(v).map(([d, o]) => `${d}:map[${Object.entries(o).map(([k, x]) => `${k}:${x}`).join(" ")}]`).join(" ")}]`,
};

// --- ulimits -----------------------------------------------------------------------------------

export interface Ulimit {
  Name: string;
  Hard: number;
  Soft: number;
}
export type Ulimits = Record<string, Ulimit>;
const validateUlimits = typia.createValidate<Ulimits>();

const ULIMIT_NAMES = [
  "core", "cpu", "data", "fsize", "locks", "memlock", "msgqueue", "nice", "nofile", "nproc", "rss", "rtprio", "rttime",
  "sigpending", "stack",
] as const;

function checkUlimit(u: Ulimit): Ulimit {
  if (!(ULIMIT_NAMES as readonly string[]).includes(u.Name)) {
    throw new ValueError(`invalid ulimit type: ${u.Name} (one of ${ULIMIT_NAMES.join(", ")})`);
  }
  if (u.Soft > u.Hard && u.Hard !== -1) throw new ValueError(`ulimit soft limit must be less than or equal to hard limit: ${u.Soft} > ${u.Hard}`);
  return u;
}

/** `--default-ulimit nofile=1024:2048` (soft:hard; one number sets both), as the client's run-time option. */
export const ulimits: ValueType<Ulimits> = {
  name: "ulimit",
  repeatable: true,
  parse(raw, previous) {
    const m = /^([a-z]+)=(-?\d+)(?::(-?\d+))?$/.exec(raw);
    if (!m) throw new ValueError("expected <type>=<soft limit>[:<hard limit>]");
    const soft = Number(m[2]);
    const hard = m[3] === undefined ? soft : Number(m[3]);
    return { ...previous, [m[1]]: checkUlimit({ Name: m[1], Hard: hard, Soft: soft }) };
  },
  fromFile(value) {
    const checked = validateUlimits(value);
    if (!checked.success) throw new ValueError(typiaProblem(checked.errors, "an object of ulimit name to {Name, Hard, Soft}"));
    for (const [key, u] of Object.entries(checked.data)) {
      if (u.Name !== key) throw new ValueError(`ulimit "${key}" has Name "${u.Name}"; they must match`);
      checkUlimit(u);
    }
    return structuredClone(checked.data);
  },
  toFile: (v) => v,
  show: (v) => `[${Object.values(v).map((u) => `${u.Name}=${u.Soft}:${u.Hard}`).join(" ")}]`,
};

// --- runtimes ----------------------------------------------------------------------------------

/** Form A: a runtime with its own supervisor shim. Form B: a drop-in for the default OCI runtime. */
export type RuntimeEntry =
  | { runtimeType: string; options?: Record<string, unknown> }
  | { path: string; runtimeArgs?: string[] };
export type Runtimes = Record<string, RuntimeEntry>;

interface RuntimeFileEntry {
  path?: string;
  runtimeArgs?: string[];
  runtimeType?: string;
  options?: Record<string, unknown>;
}
const validateRuntimes = typia.createValidateEquals<Record<string, RuntimeFileEntry>>();

/** The name the default OCI runtime is registered under; not for operators to redefine. */
export const DEFAULT_RUNTIME_NAME = "ocirun";

function checkRuntimeName(name: string): void {
  if (name === DEFAULT_RUNTIME_NAME) throw new ValueError(`runtime name '${name}' is reserved`);
  // Docker's name of the built-in runtime is ours too, and reserved as Docker 28 reserves it (any case)
  if (name.toLowerCase() === "runc") throw new ValueError("runtime name 'runc' is reserved");
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(name)) throw new ValueError(`invalid runtime name "${name}"`);
}

export const runtimes: ValueType<Runtimes> = {
  name: "runtime",
  repeatable: true,
  parse(raw, previous) {
    const eq = raw.indexOf("=");
    if (eq <= 0 || eq === raw.length - 1) throw new ValueError("expected <name>=<path>");
    const name = raw.slice(0, eq);
    checkRuntimeName(name);
    if (previous && name in previous) throw new ValueError(`runtime "${name}" is registered twice`);
    return { ...previous, [name]: { path: raw.slice(eq + 1) } };
  },
  fromFile(value) {
    const checked = validateRuntimes(value);
    if (!checked.success) {
      throw new ValueError(typiaProblem(checked.errors, "an object of runtime name to {path, runtimeArgs} or {runtimeType, options}"));
    }
    const out: Runtimes = {};
    for (const [name, entry] of Object.entries(checked.data)) {
      checkRuntimeName(name);
      if ((entry.path === undefined) === (entry.runtimeType === undefined)) {
        throw new ValueError(`runtime "${name}": give either path (with runtimeArgs) or runtimeType (with options), not both or neither`);
      }
      if (entry.path !== undefined) {
        if (entry.options !== undefined) throw new ValueError(`runtime "${name}": options go with runtimeType, not with path`);
        out[name] = { path: entry.path, ...(entry.runtimeArgs ? { runtimeArgs: [...entry.runtimeArgs] } : {}) };
      } else {
        if (entry.runtimeArgs !== undefined) throw new ValueError(`runtime "${name}": runtimeArgs go with path, not with runtimeType`);
        out[name] = { runtimeType: entry.runtimeType!, ...(entry.options ? { options: structuredClone(entry.options) } : {}) };
      }
    }
    return out;
  },
  toFile: (v) => v,
  show: (v) => Object.keys(v).join(" "),
};

// --- features ----------------------------------------------------------------------------------

export const features: ValueType<Record<string, boolean>> = {
  name: "map",
  repeatable: true,
  parse(raw, previous) {
    const m = /^([A-Za-z0-9_.-]+)(?:=(.*))?$/.exec(raw);
    if (!m) throw new ValueError("expected <name>[=<bool>]");
    let on = true;
    if (m[2] !== undefined) {
      if (!/^(1|t|true|TRUE|True|0|f|false|FALSE|False)$/.test(m[2])) throw new ValueError(`expected a boolean after ${m[1]}=`);
      on = /^(1|t|true|TRUE|True)$/.test(m[2]);
    }
    return { ...previous, [m[1]]: on };
  },
  fromFile(value) {
    const record = recordOf(value);
    for (const [k, v] of Object.entries(record)) {
      if (typeof v !== "boolean") throw new ValueError(`expected a boolean for feature "${k}", got ${describeJson(v)}`);
    }
    return { ...(record as Record<string, boolean>) };
  },
  toFile: (v) => v,
  show: (v) => `map[${Object.entries(v).map(([k, x]) => `${k}:${x}`).join(" ")}]`,
};

// --- builder -----------------------------------------------------------------------------------

/**
 * Docker's `builder` key: its build cache's garbage collection (host/build/cache-gc.ts). Docker 28's
 * names (`*ReservedSpace`, `*MaxUsedSpace`, `*MinFreeSpace`) and the older `keepStorage` (the reserved
 * space); a policy's `filter` as `["key=value"]` or the older map form.
 */
export interface BuilderConfig {
  gc?: {
    enabled?: boolean;
    defaultKeepStorage?: string;
    defaultReservedSpace?: string;
    defaultMaxUsedSpace?: string;
    defaultMinFreeSpace?: string;
    policy?: {
      keepStorage?: string;
      reservedSpace?: string;
      maxUsedSpace?: string;
      minFreeSpace?: string;
      filter?: string[] | Record<string, Record<string, boolean>>;
      all?: boolean;
    }[];
  };
}
const validateBuilder = typia.createValidateEquals<BuilderConfig>();
/** Go durations: `24h`, `1h30m`, `90s`, `168h`. */
const DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;

export const builder: ValueType<BuilderConfig> = {
  name: "object",
  parse() {
    throw new ValueError("builder is set in the configuration file only");
  },
  fromFile(value) {
    const checked = validateBuilder(value);
    if (!checked.success) throw new ValueError(typiaProblem(checked.errors, "{gc: {enabled, defaultKeepStorage, policy}}"));
    const gc = checked.data.gc;
    for (const size of [gc?.defaultKeepStorage, gc?.defaultReservedSpace, gc?.defaultMaxUsedSpace, gc?.defaultMinFreeSpace]) if (size !== undefined) parseBytes(size);
    for (const policy of gc?.policy ?? []) {
      for (const size of [policy.keepStorage, policy.reservedSpace, policy.maxUsedSpace, policy.minFreeSpace]) if (size !== undefined) parseBytes(size);
      for (const filter of Array.isArray(policy.filter) ? policy.filter : []) {
        const [key, val] = filter.split("=", 2);
        if (!val) throw new ValueError(`builder filter "${filter}": expected key=value`);
        if (key === "unused-for" && !DURATION.test(val)) throw new ValueError(`builder filter "${filter}": expected a duration such as 24h`);
      }
      try {
        pruneRule(policyFilters(policy.filter), { all: false }, Date.now()); // what a prune would refuse
      } catch (err) {
        throw new ValueError(`builder policy filter: ${(err as Error).message}`);
      }
    }
    return structuredClone(checked.data);
  },
  toFile: (v) => v,
  show: () => "",
};
