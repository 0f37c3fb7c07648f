/**
 * `GET /distribution/{name}/json`: what a registry holds under a name, without pulling it. The
 * descriptor of what the tag (or digest) names, and the platforms it offers: each entry of a
 * manifest list or OCI index, or the one platform of a single manifest, read from its config
 * blob (Docker's daemon does the same; a config it cannot read leaves the list empty).
 */
import { errors } from "../../core/errors.js";
import { familiarName, formatReference, type Reference } from "../../core/images/reference.js";
import type { Credentials } from "./auth.js";
import type { RegistrySession } from "./client.js";
import { MANIFEST_ACCEPT, parseManifest, sha256 } from "./manifests.js";
import type { RegistryService } from "./registry.js";

export interface DistributionInspect {
  Descriptor: { mediaType: string; digest: string; size: number; urls?: string[] };
  Platforms: Record<string, unknown>[];
}

/** A config blob larger than this is not an image config. */
const MAX_CONFIG = 16 * 1024 * 1024;

/** Docker's platform fields, in the JSON names of the OCI image spec. */
function platformOf(p: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!p || typeof p !== "object") return undefined;
  const out: Record<string, unknown> = { architecture: p.architecture ?? "", os: p.os ?? "" };
  for (const key of ["os.version", "os.features", "variant"]) if (p[key]) out[key] = p[key];
  return out.architecture || out.os ? out : undefined;
}

async function inspect(session: RegistrySession, ref: Reference): Promise<DistributionInspect> {
  const name = familiarName(formatReference(ref));
  const target = ref.digest ?? ref.tag ?? "latest";
  const top = await session.manifest(target, MANIFEST_ACCEPT);
  const digest = sha256(top.body);
  if (ref.digest && digest !== ref.digest) throw errors.imageDigestMismatch(`manifest for ${name}`, ref.digest, digest);
  const parsed = parseManifest(top.body, top.mediaType, name);
  let mediaType = top.mediaType;
  try {
    mediaType = (JSON.parse(top.body.toString("utf8")) as { mediaType?: string }).mediaType || mediaType;
  } catch {
    // parseManifest has read it already
  }
  const Descriptor = { mediaType, digest, size: top.body.length };
  const Platforms: Record<string, unknown>[] = [];
  if (parsed.kind === "index") {
    for (const m of parsed.manifests) {
      const p = platformOf(m.platform as unknown as Record<string, unknown>);
      if (p) Platforms.push(p);
    }
  } else if (parsed.manifest.config.size <= MAX_CONFIG) {
    const res = await session.blob(parsed.manifest.config.digest);
    const config = Buffer.from(await res.body.arrayBuffer());
    if (sha256(config) !== parsed.manifest.config.digest) throw errors.imageDigestMismatch(`config of ${name}`, parsed.manifest.config.digest, sha256(config));
    try {
      const p = platformOf(JSON.parse(config.toString("utf8")) as Record<string, unknown>);
      if (p) Platforms.push(p);
    } catch {
      // not JSON: no platform, as Docker
    }
  }
  return { Descriptor, Platforms };
}

export async function distributionInspect(registry: RegistryService, ref: Reference, credentials: Credentials | undefined, signal?: AbortSignal): Promise<DistributionInspect> {
  const { value } = await registry.open(ref.domain, ref.path, "pull", credentials, signal, (s) => inspect(s, ref));
  return value;
}
