/**
 * Contexts as the Docker CLI's templates see them. `context ls`: a row (.Name, .Current,
 * .Description, .DockerEndpoint, .Error), the error cut to 45 columns as the CLI cuts it.
 * `context inspect`: the CLI's contextWithTLSListing, store.Metadata embedded in it, so that
 * `.Name` and `.Endpoints` work and `.Metadata` is the embedded store.Metadata (whose own
 * `.Metadata` is the DockerContext with `.Description`); `.TLSMaterial`, `.Storage`.
 */
import type { ContextMetadata } from "../context/metadata.js";
import { dockerContextValue, endpointsValue, goMarshal, metadataValue } from "../context/metadata.js";
import { ellipsis } from "./render.js";
import { MarshaledJson, plainStruct, struct, TypedNull, type GoStruct } from "./template.js";

export interface ContextRow {
  name: string;
  current: boolean;
  description: string;
  dockerEndpoint: string;
  error: string;
}

export const CONTEXT_ROW_TYPE = "*formatter.clientContextContext";

/**
 * The header row's names. The CLI's header is a map without "Current": a template that names
 * it gets "<no value>" there, which an `if` takes as false (a TypedNull does both).
 */
export const CONTEXT_HEADERS = { Name: "NAME", Description: "DESCRIPTION", DockerEndpoint: "DOCKER ENDPOINT", Error: "ERROR", Current: new TypedNull("<no value>") };

export function contextRow(c: ContextRow): GoStruct {
  return struct(CONTEXT_ROW_TYPE, {
    Name: () => c.name,
    Current: () => c.current,
    Description: () => c.description,
    DockerEndpoint: () => c.dockerEndpoint,
    Error: () => ellipsis(c.error, 45),
  });
}

/** What `context inspect` prints and runs its template on. */
export interface InspectedContext {
  meta: ContextMetadata;
  tlsMaterial: Record<string, string[]>;
  storage: { MetadataPath: string; TLSPath: string };
}

/** The JSON `context inspect` prints for a context (Go's json.Marshal: HTML characters escaped). */
export function inspectJson(c: InspectedContext): string {
  return goMarshal({ ...metadataValue(c.meta), TLSMaterial: c.tlsMaterial, Storage: c.storage });
}

export function inspectStruct(c: InspectedContext): GoStruct {
  const endpoints: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(endpointsValue(c.meta))) {
    endpoints[k] = k === "docker" ? endpointStruct(v as { Host?: string; SkipTLSVerify: boolean }) : v;
  }
  // the DockerContext marshals itself (json.Marshal inside: HTML escaped, whatever encoder it is in)
  const dockerContext = struct("command.DockerContext", {
    Description: c.meta.description,
    AdditionalFields: c.meta.extra,
    toJSON: () => new MarshaledJson(goMarshal(dockerContextValue(c.meta))),
  });
  const metadata = plainStruct("store.Metadata", {
    Name: c.meta.name,
    Metadata: dockerContext,
    Endpoints: endpoints,
    toJSON: () => ({ Name: c.meta.name, Metadata: dockerContext, Endpoints: endpoints }),
  });
  const storage = plainStruct("store.StorageInfo", { ...c.storage, toJSON: () => ({ ...c.storage }) });
  // Name and Endpoints are store.Metadata's, promoted: methods here, so that `{{.}}` prints them once
  return plainStruct("context.contextWithTLSListing", {
    Metadata: metadata,
    Name: () => c.meta.name,
    Endpoints: () => endpoints,
    TLSMaterial: c.tlsMaterial,
    Storage: storage,
    toJSON: () => ({ Name: c.meta.name, Metadata: dockerContext, Endpoints: endpoints, TLSMaterial: c.tlsMaterial, Storage: storage }),
  });
}

function endpointStruct(ep: { Host?: string; SkipTLSVerify: boolean }): GoStruct {
  return plainStruct("docker.EndpointMeta", { Host: ep.Host ?? "", SkipTLSVerify: ep.SkipTLSVerify, toJSON: () => ({ ...ep }) });
}
