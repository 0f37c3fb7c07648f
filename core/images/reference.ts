/**
 * Image references, read and normalised the way Docker's clients do: `busybox` is
 * `docker.io/library/busybox:latest` and is shown as `busybox:latest`; `localhost:5000/app`
 * keeps its registry; `name@sha256:<hex>` names a digest. A name that breaks the grammar is
 * "invalid reference format".
 */
import { errors } from "../errors.js";

export const DEFAULT_DOMAIN = "docker.io";
const LEGACY_DEFAULT_DOMAIN = "index.docker.io";
const OFFICIAL_PREFIX = "library/";
const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const DOMAIN = /^(?:localhost|[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:]+\])(?::\d+)?$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^sha256:[a-f0-9]{64}$/;

export interface Reference {
  /** `docker.io`, `localhost:5000`, ... */
  domain: string;
  /** `library/busybox`, `team/app`. */
  path: string;
  tag?: string;
  digest?: string;
}

/** Whether `text` is a registry's name as a reference may start with one: `host`, `host:port`, `[v6]:port`, `localhost`. */
export function isRegistryDomain(text: string): boolean {
  return DOMAIN.test(text);
}

/** A tag given apart from its repository (`?tag=`): Docker's "invalid tag format" when it is none. */
export function checkTag(tag: string): string {
  if (!TAG.test(tag)) throw errors.imageInvalidTag();
  return tag;
}

/** Reads a reference; `defaultTag` fills a missing tag when there is no digest either (null: none). */
export function parseReference(text: string, defaultTag: string | null = "latest"): Reference {
  refuseCapitals(text);
  let rest = text;
  let digest: string | undefined;
  const at = rest.indexOf("@");
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) throw errors.imageInvalidReference();
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(":");
  if (colon > rest.lastIndexOf("/")) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) throw errors.imageInvalidReference();
  }
  const parts = rest.split("/");
  let domain = DEFAULT_DOMAIN;
  // Docker's reference parser: a first component with a dot, a colon or a capital, or `localhost`, is a registry
  const first = parts[0];
  if (parts.length > 1 && (first.includes(".") || first.includes(":") || first === "localhost" || first.toLowerCase() !== first)) {
    domain = parts.shift()!;
    if (!DOMAIN.test(domain)) throw errors.imageInvalidReference();
    // the legacy name of Docker Hub's registry names it as docker.io does
    if (domain === LEGACY_DEFAULT_DOMAIN) domain = DEFAULT_DOMAIN;
  }
  let path = parts.join("/");
  if (domain === DEFAULT_DOMAIN && parts.length === 1) path = OFFICIAL_PREFIX + path;
  if (parts.length === 0 || parts.some((p) => !COMPONENT.test(p))) throw errors.imageInvalidReference();
  if (path.length > 255) throw errors.imageInvalidReference("repository name must not be more than 255 characters");
  if (tag === undefined && digest === undefined && defaultTag !== null) tag = defaultTag;
  return { domain, path, tag, digest };
}

/**
 * Docker's parser (ParseNormalizedNamed) refuses a repository with capitals before it reads
 * anything else: what follows the registry, up to the first `:`, `library/` added to an
 * official image's, is named in the refusal (`Foo@3cc` is `library/Foo@3cc`).
 */
function refuseCapitals(text: string): void {
  const slash = text.indexOf("/");
  const first = slash < 0 ? "" : text.slice(0, slash);
  const registry = slash >= 0 && (first.includes(".") || first.includes(":") || first === "localhost" || first.toLowerCase() !== first);
  let remainder = registry ? text.slice(slash + 1) : text;
  const hub = !registry || first === DEFAULT_DOMAIN || first === LEGACY_DEFAULT_DOMAIN;
  if (hub && !remainder.includes("/")) remainder = OFFICIAL_PREFIX + remainder;
  const colon = remainder.indexOf(":");
  const remote = colon < 0 ? remainder : remainder.slice(0, colon);
  if (remote.toLowerCase() !== remote) throw errors.imageInvalidReference(`invalid reference format: repository name (${remote}) must be lowercase`);
}

/** The repository's full name: `docker.io/library/busybox`. */
export function repositoryOf(ref: Reference): string {
  return `${ref.domain}/${ref.path}`;
}

/** The full form, as stored: `docker.io/library/busybox:latest` or `...@sha256:...`. */
export function formatReference(ref: Reference): string {
  return `${repositoryOf(ref)}${ref.tag !== undefined ? `:${ref.tag}` : ""}${ref.digest ? `@${ref.digest}` : ""}`;
}

/** The short form clients show: `busybox:latest`, `team/app:1`, `localhost:5000/app:2`. */
export function familiarName(full: string): string {
  if (!full.startsWith(`${DEFAULT_DOMAIN}/`)) return full;
  const rest = full.slice(DEFAULT_DOMAIN.length + 1);
  return rest.startsWith(OFFICIAL_PREFIX) ? rest.slice(OFFICIAL_PREFIX.length) : rest;
}

/**
 * A name to give an image (a tag's, a commit's, a build's, an import's, a pull's repository):
 * one that is a 64-hex string alone would read as an image ID wherever it is used, and Docker's
 * parser (ParseNormalizedNamed) refuses it. A look-up takes such a string as an ID instead.
 */
export function refuseIdAsName(name: string): void {
  if (/^[a-f0-9]{64}$/.test(name)) throw errors.imageInvalidReference(`invalid repository name (${name}), cannot specify 64-byte hexadecimal strings`);
}

/**
 * The name a `repo` and a `tag` query parameter give together (a tag's, a commit's, an
 * import's), as Docker 28's router reads them (httputils.RepoTagReference): the repository
 * read whole, a digest refused, `tag` replacing any tag the repository carries, `latest` when
 * there is neither. The full reference; undefined without a repo.
 */
export function repoTagReference(repo: string | undefined, tag: string | undefined): string | undefined {
  if (!repo) return undefined;
  refuseIdAsName(repo);
  const ref = parseReference(repo, null);
  if (ref.digest) throw errors.imageRepoIsDigest();
  return formatReference({ domain: ref.domain, path: ref.path, tag: tag ? checkTag(tag) : (ref.tag ?? "latest") });
}
