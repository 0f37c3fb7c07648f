/**
 * A context's metadata as the Docker CLI stores it in meta.json (store.Metadata):
 *   {"Name":"prod","Metadata":{"Description":"..."},"Endpoints":{"docker":{"Host":"tcp://h:2376","SkipTLSVerify":false}}}
 * `Metadata` is the CLI's DockerContext: a description and whatever other keys a tool put there
 * (kept, as the CLI keeps them). The "docker" endpoint is typed (Host, SkipTLSVerify; other keys
 * dropped, as the CLI's typed decoding drops them); other endpoints are kept as read. The bytes
 * written are those Go's json.Marshal writes for it: keys of maps sorted, HTML characters
 * escaped, so a context written here and one written by the Docker CLI are the same file.
 */

/** The endpoint the client connects through; the other kinds (kubernetes) are gone from the CLI. */
export const DOCKER_ENDPOINT = "docker";

export interface EndpointMeta {
  Host?: string;
  SkipTLSVerify: boolean;
}

export interface ContextMetadata {
  name: string;
  description: string;
  /** Metadata's other keys (the CLI's AdditionalFields). */
  extra: Record<string, unknown>;
  /** By endpoint name: "docker" an EndpointMeta, others as read. */
  endpoints: Record<string, unknown>;
}

/** meta.json's text into metadata; throws with the reason (`file` names it). */
export function parseMetadata(text: string, file: string): ContextMetadata {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new Error(`parsing ${file}: ${(e as Error).message}`);
  }
  const obj = isObject(raw) ? raw : {};
  const meta = isObject(obj.Metadata) ? obj.Metadata : {};
  const { Description, ...extra } = meta;
  const endpoints: Record<string, unknown> = {};
  if (isObject(obj.Endpoints)) {
    for (const [k, v] of Object.entries(obj.Endpoints)) endpoints[k] = k === DOCKER_ENDPOINT ? endpointMeta(v) : v;
  }
  return { name: typeof obj.Name === "string" ? obj.Name : "", description: typeof Description === "string" ? Description : "", extra, endpoints };
}

function endpointMeta(v: unknown): EndpointMeta {
  const o = isObject(v) ? v : {};
  const ep: EndpointMeta = { SkipTLSVerify: o.SkipTLSVerify === true };
  if (typeof o.Host === "string" && o.Host !== "") ep.Host = o.Host;
  return ep;
}

/** The docker endpoint of a context, if it has one. */
export function dockerEndpoint(meta: ContextMetadata): EndpointMeta | undefined {
  const ep = meta.endpoints[DOCKER_ENDPOINT];
  return ep === undefined ? undefined : (ep as EndpointMeta);
}

/** The value Go marshals for the context's `Metadata` (a DockerContext): its keys, sorted. */
export function dockerContextValue(meta: ContextMetadata): Record<string, unknown> {
  return sortedDeep({ ...meta.extra, ...(meta.description ? { Description: meta.description } : {}) }) as Record<string, unknown>;
}

/** The docker endpoint as Go marshals it (Host left out when empty), other endpoints with their keys sorted. */
export function endpointsValue(meta: ContextMetadata): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(meta.endpoints).sort()) {
    const v = meta.endpoints[k];
    if (k !== DOCKER_ENDPOINT) out[k] = sortedDeep(v);
    else out[k] = { ...((v as EndpointMeta).Host ? { Host: (v as EndpointMeta).Host } : {}), SkipTLSVerify: (v as EndpointMeta).SkipTLSVerify };
  }
  return out;
}

/** store.Metadata as Go marshals it: Name and Endpoints left out when empty. */
export function metadataValue(meta: ContextMetadata): Record<string, unknown> {
  const endpoints = endpointsValue(meta);
  return { ...(meta.name ? { Name: meta.name } : {}), Metadata: dockerContextValue(meta), ...(Object.keys(endpoints).length ? { Endpoints: endpoints } : {}) };
}

/** meta.json's bytes, as the Docker CLI writes them. */
export function marshalMetadata(meta: ContextMetadata): string {
  return goMarshal(metadataValue(meta));
}

/** Go's json.Marshal of plain data: as JSON.stringify, with <, >, & and U+2028/9 escaped. */
export function goMarshal(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Go re-marshals a map[string]any with its keys sorted, at every depth. */
function sortedDeep(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortedDeep);
  if (!isObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) out[k] = sortedDeep(v[k]);
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
