/**
 * `POST /build`'s query (API 1.51, the parameters the classic builder takes) and its
 * `X-Registry-Config` header, read into the build's options; a value that cannot be read is a
 * 400 naming the parameter. `version=2` asks for BuildKit, which this daemon does not have.
 */
import type { IncomingHttpHeaders } from "node:http";
import { errors } from "../../core/errors.js";
import { formatReference, parseReference, refuseIdAsName } from "../../core/images/reference.js";
import type { BuildOptions } from "../build/build-options.js";
import type { Credentials } from "../registry/auth.js";
import { credentialsOf } from "../registry/auth-header.js";
import { parsePlatform } from "../registry/manifests.js";
import { queryBool, queryList, queryString, type Query } from "./query.js";
import { compareApiVersions } from "../../core/version.js";

function jsonParam<T>(query: Query, name: string, check: (v: unknown) => v is T, fallback: T): T {
  const raw = queryString(query, name);
  if (raw === undefined || raw === "") return fallback;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw errors.apiInvalidParameter(name, raw);
  }
  if (value === null) return fallback;
  if (!check(value)) throw errors.apiInvalidParameter(name, raw);
  return value;
}

const isStringMap = (nullable: boolean) => (v: unknown): v is Record<string, string> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === "string" || (nullable && x === null));
const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === "string");

function intParam(query: Query, name: string): number | undefined {
  const raw = queryString(query, name);
  if (raw === undefined || raw === "") return undefined;
  if (!/^-?\d+$/.test(raw)) throw errors.apiInvalidParameter(name, raw);
  return Number(raw);
}

/** `X-Registry-Config`: base64 JSON of registry host -> credentials. */
function registryConfig(header: string | string[] | undefined): Map<string, Credentials> {
  const text = Array.isArray(header) ? header[0] : header;
  const out = new Map<string, Credentials>();
  if (!text || !text.trim()) return out;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text.trim().replace(/-/g, "+").replace(/_/g, "/"), "base64").toString("utf8"));
  } catch {
    throw errors.registryInvalidAuthHeader("X-Registry-Config is not base64-encoded JSON");
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) throw errors.registryInvalidAuthHeader("X-Registry-Config is not a JSON object");
  for (const [host, creds] of Object.entries(value)) {
    const c = credentialsOf(creds);
    if (c) out.set(host.replace(/^https?:\/\//, "").replace(/\/.*$/, ""), c);
  }
  return out;
}

export function buildOptionsFrom(query: Query, headers: IncomingHttpHeaders, apiVersion: string): BuildOptions {
  if ((queryString(query, "version") ?? "1") === "2") throw errors.buildInvalidOption("version", "BuildKit (version=2) is not supported by this daemon: use the classic builder (DOCKER_BUILDKIT=0)");
  const tags = queryList(query, "t").filter((t) => t !== "").map((t) => {
    refuseIdAsName(t);
    const ref = parseReference(t);
    if (ref.digest) throw errors.buildInvalidOption("tag", `${t}: a build cannot be tagged with a digest`);
    return formatReference(ref);
  });
  const extraHosts = queryList(query, "extrahosts").flatMap((h) => h.split(",")).map((h) => h.trim()).filter(Boolean);
  // (a platform is read from API 1.32, as Docker's route reads it)
  const platformText = compareApiVersions(apiVersion, "1.32") >= 0 ? queryString(query, "platform") : undefined;
  const credentials = registryConfig(headers["x-registry-config"]);
  const memory = intParam(query, "memory");
  const memswap = intParam(query, "memswap");
  const cpuShares = intParam(query, "cpushares");
  const cpuPeriod = intParam(query, "cpuperiod");
  const cpuQuota = intParam(query, "cpuquota");
  const shmSize = intParam(query, "shmsize");
  const cpusetCpus = queryString(query, "cpusetcpus");
  const networkMode = queryString(query, "networkmode");
  return {
    tags,
    dockerfile: queryString(query, "dockerfile") || "Dockerfile",
    remote: queryString(query, "remote") || undefined,
    quiet: queryBool(query, "q"),
    noCache: queryBool(query, "nocache"),
    cacheFrom: jsonParam(query, "cachefrom", isStringList, []),
    pull: queryBool(query, "pull"),
    remove: queryBool(query, "rm", true),
    forceRemove: queryBool(query, "forcerm"),
    buildArgs: jsonParam(query, "buildargs", isStringMap(true), {}),
    labels: jsonParam(query, "labels", isStringMap(false), {}),
    target: queryString(query, "target") || undefined,
    platform: platformText ? parsePlatform(platformText) : undefined,
    hostConfig: {
      ...(networkMode && networkMode !== "default" ? { NetworkMode: networkMode } : {}),
      ...(memory ? { Memory: memory } : {}),
      ...(memswap ? { MemorySwap: memswap } : {}),
      ...(cpuShares ? { CpuShares: cpuShares } : {}),
      ...(cpuPeriod ? { CpuPeriod: cpuPeriod } : {}),
      ...(cpuQuota ? { CpuQuota: cpuQuota } : {}),
      ...(shmSize ? { ShmSize: shmSize } : {}),
      ...(cpusetCpus ? { CpusetCpus: cpusetCpus } : {}),
      ...(extraHosts.length ? { ExtraHosts: extraHosts } : {}),
    },
    credentials: (host) => credentials.get(host) ?? (host === "docker.io" ? credentials.get("index.docker.io/v1") ?? credentials.get("index.docker.io") : undefined),
  };
}
