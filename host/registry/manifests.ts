/**
 * Manifests as registries serve them: Docker schema 2 and OCI image manifests (one platform),
 * Docker manifest lists and OCI indexes (several), with the platform chosen for this host or
 * for the one asked for. Schema 1 (signed, from Docker's v1 days) is refused.
 */
import { createHash } from "node:crypto";
import { errors } from "../../core/errors.js";
import { parsePlatformSpecifier } from "../../core/images/platform-specifier.js";

export const MediaTypes = {
  dockerManifest: "application/vnd.docker.distribution.manifest.v2+json",
  dockerList: "application/vnd.docker.distribution.manifest.list.v2+json",
  dockerConfig: "application/vnd.docker.container.image.v1+json",
  dockerLayer: "application/vnd.docker.image.rootfs.diff.tar.gzip",
  ociManifest: "application/vnd.oci.image.manifest.v1+json",
  ociIndex: "application/vnd.oci.image.index.v1+json",
  ociConfig: "application/vnd.oci.image.config.v1+json",
  ociLayerGzip: "application/vnd.oci.image.layer.v1.tar+gzip",
  ociLayerZstd: "application/vnd.oci.image.layer.v1.tar+zstd",
} as const;

/** What a pull asks for, best first. */
export const MANIFEST_ACCEPT = [MediaTypes.ociIndex, MediaTypes.dockerList, MediaTypes.ociManifest, MediaTypes.dockerManifest];

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  urls?: string[];
  platform?: Platform;
}

export interface Platform {
  os: string;
  architecture: string;
  variant?: string;
}

export interface ImageManifest {
  mediaType: string;
  config: Descriptor;
  layers: Descriptor[];
}

export type Manifest = { kind: "image"; manifest: ImageManifest } | { kind: "index"; manifests: Descriptor[] };

export const sha256 = (data: Buffer) => `sha256:${createHash("sha256").update(data).digest("hex")}`;

const LAYER_TYPES = /^application\/vnd\.(docker\.image\.rootfs\.(foreign\.)?diff\.tar\.gzip|oci\.image\.layer\.(nondistributable\.)?v1\.tar(\+gzip|\+zstd)?)$/;

export function parseManifest(body: Buffer, servedType: string, ref: string): Manifest {
  let doc: { schemaVersion?: number; mediaType?: string; config?: Descriptor; layers?: Descriptor[]; manifests?: Descriptor[] };
  try {
    doc = JSON.parse(body.toString("utf8"));
  } catch {
    throw errors.registryError(`manifest for ${ref}`, "not valid JSON");
  }
  const type = doc.mediaType || servedType;
  if (doc.schemaVersion === 1 || /^application\/vnd\.docker\.distribution\.manifest\.v1\+(prettyjws|json)$/.test(type)) throw errors.registryUnsupportedManifest(ref, type || "schema 1");
  if (Array.isArray(doc.manifests) && (type === MediaTypes.dockerList || type === MediaTypes.ociIndex || !type)) {
    return { kind: "index", manifests: doc.manifests };
  }
  if (doc.config && Array.isArray(doc.layers) && (type === MediaTypes.dockerManifest || type === MediaTypes.ociManifest || !type)) {
    for (const layer of doc.layers) {
      if (!LAYER_TYPES.test(layer.mediaType)) throw errors.registryError(`manifest for ${ref}`, `unsupported layer media type ${layer.mediaType}`);
    }
    return { kind: "image", manifest: { mediaType: type || MediaTypes.ociManifest, config: doc.config, layers: doc.layers } };
  }
  throw errors.registryUnsupportedManifest(ref, type);
}

/** This host's platform, in OCI's words. */
export function hostPlatform(): Platform {
  const arch: Record<string, Platform> = {
    x64: { os: "linux", architecture: "amd64" },
    arm64: { os: "linux", architecture: "arm64", variant: "v8" },
    arm: { os: "linux", architecture: "arm", variant: "v7" },
    ia32: { os: "linux", architecture: "386" },
    ppc64: { os: "linux", architecture: "ppc64le" },
    s390x: { os: "linux", architecture: "s390x" },
    riscv64: { os: "linux", architecture: "riscv64" },
  };
  return arch[process.arch] ?? { os: "linux", architecture: process.arch };
}

/**
 * A request's `platform=` (a pull, an import, a create, a build) -> a platform; an empty string
 * is the host's. Read as Docker's daemon reads it (containerd's platforms.Parse): a refusal is a
 * 400 in containerd's words ("unknown operating system or architecture", ...).
 */
export function parsePlatform(text: string | undefined): Platform {
  if (!text) return hostPlatform();
  let p;
  try {
    p = parsePlatformSpecifier(text);
  } catch (err) {
    throw errors.platformInvalid((err as Error).message);
  }
  return { os: p.os, architecture: p.architecture, ...(p.variant ? { variant: p.variant } : {}) };
}

export const formatPlatform = (p: Platform) => [p.os, p.architecture, p.variant].filter(Boolean).join("/");

/** The index entry for the platform: exact variant first, then any variant of the architecture (arm64's is optional). */
export function choosePlatform(manifests: readonly Descriptor[], want: Platform): Descriptor {
  const candidates = manifests.filter((m) => m.platform && m.platform.os === want.os && m.platform.architecture === want.architecture);
  const normal = (v?: string) => (want.architecture === "arm64" && (v === undefined || v === "v8") ? "v8" : v);
  const exact = candidates.find((m) => normal(m.platform!.variant) === normal(want.variant));
  const chosen = exact ?? (want.variant ? undefined : candidates[0]);
  if (!chosen) throw errors.registryNoMatchingPlatform(formatPlatform(want));
  return chosen;
}
