/**
 * The stored contexts and the "default" one together, as the Docker CLI's store-with-default:
 * "default" stands for this run's `-H` / ENGINE_HOST / default socket and TLS flags, is listed,
 * inspected and exported like the others, and is never stored, changed or removed.
 */
import type { CommandContext } from "../command.js";
import { targetUrl } from "../transport/dial.js";
import { DEFAULT_CONTEXT } from "./current.js";
import { goQuote } from "../format/render.js";
import { DOCKER_ENDPOINT, type ContextMetadata } from "./metadata.js";
import { ContextNotFound, ContextStore, type TlsData } from "./store.js";

/** The default context's description in `context ls` (and in a context created from it). */
export const DEFAULT_DESCRIPTION = "Current ENGINE_HOST based configuration";

export class Contexts {
  readonly store: ContextStore;
  private defaults?: { meta: ContextMetadata; tls: TlsData };

  constructor(private readonly ctx: CommandContext) {
    this.store = new ContextStore(ctx.configDir);
  }

  /** The context this run uses (`--context`, ENGINE_CONTEXT, config.json...). */
  current(): string {
    return this.ctx.currentContext();
  }

  /** The metadata of a context, "default" included; ContextNotFound when there is none. */
  get(name: string): ContextMetadata {
    return name === DEFAULT_CONTEXT ? this.defaultContext().meta : this.store.get(name);
  }

  /** Every context, "default" last (callers sort). */
  list(): ContextMetadata[] {
    return [...this.store.list(), this.defaultContext().meta];
  }

  tlsFiles(name: string): Record<string, string[]> {
    if (name !== DEFAULT_CONTEXT) return this.store.tlsFiles(name);
    return Object.fromEntries(Object.entries(this.defaultContext().tls).map(([ep, files]) => [ep, Object.keys(files).sort()]));
  }

  readAllTls(name: string): TlsData {
    return name === DEFAULT_CONTEXT ? this.defaultContext().tls : this.store.readAllTls(name);
  }

  /** Where a context is kept, as `context inspect` shows it. */
  storage(name: string): { MetadataPath: string; TLSPath: string } {
    if (name === DEFAULT_CONTEXT) return { MetadataPath: "<IN MEMORY>", TLSPath: "<IN MEMORY>" };
    return { MetadataPath: this.store.metaDir(name), TLSPath: this.store.tlsDir(name) };
  }

  private defaultContext(): { meta: ContextMetadata; tls: TlsData } {
    if (this.defaults) return this.defaults;
    const settings = this.ctx.defaultConnection();
    const tls: TlsData = {};
    if (settings.tls) {
      const files: Record<string, Buffer> = {};
      if (settings.tls.ca) files["ca.pem"] = settings.tls.ca;
      if (settings.tls.cert) files["cert.pem"] = settings.tls.cert;
      if (settings.tls.key) files["key.pem"] = settings.tls.key;
      tls[DOCKER_ENDPOINT] = files;
    }
    const endpoint = { Host: targetUrl(settings.target), SkipTLSVerify: Boolean(settings.tls && !settings.tls.verify) };
    this.defaults = { meta: { name: DEFAULT_CONTEXT, description: "", extra: {}, endpoints: { [DOCKER_ENDPOINT]: endpoint } }, tls };
    return this.defaults;
  }
}

const NAME_PATTERN = "^[a-zA-Z0-9][a-zA-Z0-9_.+-]+$";

/** The Docker CLI's check of a name a context is created or imported under; the message to print, or undefined. */
export function invalidName(name: string): string | undefined {
  if (name === "") return "context name cannot be empty";
  if (name === "default") return `"default" is a reserved context name`;
  if (!new RegExp(NAME_PATTERN).test(name)) return `context name ${goQuote(name)} is invalid, names are validated against regexp ${goQuote(NAME_PATTERN)}`;
  return undefined;
}

/** A name a new context may take (`create`, `import`); throws with the Docker CLI's message. */
export function checkNewName(store: ContextStore, name: string): void {
  const invalid = invalidName(name);
  if (invalid) throw new Error(invalid);
  try {
    store.get(name);
  } catch (e) {
    if (e instanceof ContextNotFound) return;
    throw new Error(`error while getting existing contexts: ${(e as Error).message}`);
  }
  throw new Error(`context "${name}" already exists`);
}
