/**
 * The daemon's registry service: the endpoints of a repository tried in order (mirrors, then
 * the origin; for an insecure registry TLS unverified, then plain HTTP), one shared transport
 * and token cache. `open` returns the first endpoint that answers the way a registry does
 * together with what the caller asked of it (the manifest, for a pull); a mirror that fails
 * in any way is passed over, the origin's own answers (unauthorized, not found) are final.
 */
import { errors, EngineError } from "../../core/errors.js";
import { TokenCache, type Credentials } from "./auth.js";
import { ConnectError, RegistrySession, type Action } from "./client.js";
import { endpointsFor, type Endpoint, type RegistrySettings } from "./endpoints.js";
import { Transport, type ProxySettings } from "./transport.js";

export interface RegistryServiceSettings extends RegistrySettings {
  proxies: ProxySettings;
}

export class RegistryService {
  readonly tokens = new TokenCache();
  readonly transport: Transport;

  constructor(private readonly settings: () => RegistryServiceSettings, certsDir?: string) {
    this.transport = new Transport(() => this.settings().proxies, certsDir);
  }

  endpoints(domain: string, purpose: "pull" | "push" | "login"): Promise<Endpoint[]> {
    return endpointsFor(domain, purpose, this.settings());
  }

  session(endpoint: Endpoint, repository: string, actions: readonly Action[], credentials?: Credentials, signal?: AbortSignal): RegistrySession {
    return new RegistrySession({ endpoint, repository, actions, credentials, signal, tokens: this.tokens, dispatcher: this.transport.dispatcherFor(endpoint) });
  }

  /**
   * Tries the endpoints of `domain` until `use` succeeds on one; resolves with that session and
   * what `use` gave. A failure to connect tries the next; so does any failure of a mirror.
   */
  async open<T>(
    domain: string,
    repository: string,
    purpose: "pull" | "push" | "login",
    credentials: Credentials | undefined,
    signal: AbortSignal | undefined,
    use: (session: RegistrySession) => Promise<T>,
  ): Promise<{ session: RegistrySession; value: T }> {
    const actions: Action[] = purpose === "push" ? ["pull", "push"] : ["pull"];
    let lastConnect: { endpoint: Endpoint; err: ConnectError } | undefined;
    let lastOther: unknown;
    for (const endpoint of await this.endpoints(domain, purpose)) {
      const session = this.session(endpoint, repository, actions, credentials, signal);
      try {
        await session.ping();
        return { session, value: await use(session) };
      } catch (err) {
        if (signal?.aborted) throw err;
        if (err instanceof ConnectError) {
          // the plain-HTTP try of an insecure registry explains less than its TLS try
          if (!lastConnect || !lastConnect.endpoint.insecure || endpoint.mirror) lastConnect = { endpoint, err };
          continue;
        }
        if (endpoint.mirror) {
          lastOther = err;
          continue;
        }
        throw err;
      }
    }
    if (lastConnect) {
      const { endpoint, err } = lastConnect;
      if (!endpoint.insecure && !endpoint.mirror && err.tls) throw errors.registryNotSecure(`${endpoint.url}/v2/`, err.message, endpoint.host);
      throw errors.registryUnreachable(`${endpoint.url}/v2/`, err.message);
    }
    if (lastOther instanceof EngineError) throw lastOther;
    throw errors.registryUnreachable(domain, "no endpoint answered");
  }

  close(): Promise<void> {
    return this.transport.closeAll();
  }
}
