/**
 * Image references read on the client side as the Docker CLI reads them (distribution's
 * ParseNormalizedNamed), with its error messages: the registry a reference names decides
 * which credentials go with a pull or push, and the CLI prints the normalised reference.
 */
import { ExitError } from "./command.js";

export const DEFAULT_DOMAIN = "docker.io";

const PATH_COMPONENT = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
const DOMAIN_COMPONENT = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
const HOST = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[a-fA-F0-9:]+\\])`;
const NAME = `(?:${HOST}(?::[0-9]+)?/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*`;
const REFERENCE = new RegExp(`^(${NAME})(?::([\\w][\\w.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?$`);

export interface NamedReference {
  /** `docker.io`, `127.0.0.1:5000`. */
  domain: string;
  /** `library/busybox`, `team/app`. */
  path: string;
  tag?: string;
  digest?: string;
}

/** A reference the CLI refuses: the command exits 1 with the message, as the Docker CLI does. */
export class ReferenceError extends ExitError {
  constructor(message: string) {
    super(1, message);
  }
}

/** `busybox` -> docker.io/library/busybox (no tag added: see withDefaultTag). */
export function parseNormalizedNamed(text: string): NamedReference {
  if (/^[a-f0-9]{64}$/.test(text)) throw new ReferenceError(`invalid repository name (${text}), cannot specify 64-byte hexadecimal strings`);
  const slash = text.indexOf("/");
  const first = slash < 0 ? "" : text.slice(0, slash);
  // A first component is a registry when it looks like a host (a dot, a port, localhost, capitals).
  const hasDomain = slash >= 0 && (/[.:]/.test(first) || first === "localhost" || first.toLowerCase() !== first);
  let domain = hasDomain ? first : DEFAULT_DOMAIN;
  let remainder = hasDomain ? text.slice(slash + 1) : text;
  if (domain === "index.docker.io") domain = DEFAULT_DOMAIN;
  if (domain === DEFAULT_DOMAIN && !remainder.includes("/")) remainder = `library/${remainder}`;
  const colon = remainder.indexOf(":");
  const remoteName = colon < 0 ? remainder : remainder.slice(0, colon);
  if (remoteName.toLowerCase() !== remoteName) throw new ReferenceError(`invalid reference format: repository name (${remoteName}) must be lowercase`);
  const full = `${domain}/${remainder}`;
  const m = REFERENCE.exec(full);
  if (!m) {
    if (text === "") throw new ReferenceError("repository name must have at least one component");
    if (REFERENCE.test(full.toLowerCase())) throw new ReferenceError("invalid reference format: repository name must be lowercase");
    throw new ReferenceError("invalid reference format");
  }
  if (m[1].length > 255) throw new ReferenceError("repository name must not be more than 255 characters");
  return { domain, path: m[1].slice(domain.length + 1), tag: m[2], digest: m[3] };
}

const isNameOnly = (ref: NamedReference): boolean => ref.tag === undefined && ref.digest === undefined;

/** The repository's full name: `docker.io/library/busybox`. */
export const repositoryName = (ref: NamedReference): string => `${ref.domain}/${ref.path}`;

/** The full form Docker's CLI prints: `docker.io/library/busybox:latest`. */
export function referenceString(ref: NamedReference): string {
  return `${repositoryName(ref)}${ref.tag !== undefined ? `:${ref.tag}` : ""}${ref.digest ? `@${ref.digest}` : ""}`;
}

/** The short form: `busybox:latest`, `team/app:1`, `127.0.0.1:5000/app`. */
export function familiarString(ref: NamedReference): string {
  let name = repositoryName(ref);
  if (ref.domain === DEFAULT_DOMAIN) name = ref.path.startsWith("library/") && ref.path.split("/").length === 2 ? ref.path.slice(8) : ref.path;
  return `${name}${ref.tag !== undefined ? `:${ref.tag}` : ""}${ref.digest ? `@${ref.digest}` : ""}`;
}

/**
 * The reference a pull or push names: `tagged` is false when none was given and `latest` was
 * added (the CLI then says "Using default tag: latest"). Errors are the Docker CLI's.
 */
export function transferReference(text: string, allTags: boolean): { ref: NamedReference; defaulted: boolean } {
  const ref = parseNormalizedNamed(text);
  if (allTags && !isNameOnly(ref)) throw new ReferenceError("tag can't be used with --all-tags/-a");
  if (allTags || !isNameOnly(ref)) return { ref, defaulted: false };
  return { ref: { ...ref, tag: "latest" }, defaulted: true };
}
