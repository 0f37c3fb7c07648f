/**
 * `GET /images/search`: Docker's search, the legacy v1 endpoint `GET /v1/search?q=&n=` of the
 * registry the term names (Docker Hub's index when it names none). Registries of the v2
 * protocol alone (the CNCF distribution registry among them) have no search: the answer then
 * names the registry, as does one that cannot be reached. The whole exchange is bounded in time
 * so that a registry that does not answer is an error, not a hang.
 */
import { undici } from "../http/undici.js";
import { errors } from "../../core/errors.js";
import { DEFAULT_DOMAIN } from "../../core/images/reference.js";
import { basicHeader, type Credentials } from "./auth.js";
import { ConnectError } from "./client.js";
import type { Endpoint } from "./endpoints.js";
import type { RegistryService } from "./registry.js";

export interface SearchResult {
  name: string;
  description: string;
  star_count: number;
  is_official: boolean;
  is_automated: boolean;
}

export interface SearchFilters {
  isOfficial?: boolean;
  stars: number;
  /** The deprecated `is-automated=true`: nothing is automated any more, so nothing matches. */
  automatedOnly: boolean;
}

/** Docker Hub's search lives on its index, not on its registry API host. */
const HUB_INDEX = "index.docker.io";
const TIMEOUT_MS = 15_000;
/** At most 100 results of a few fields each: a larger answer is not a search answer. */
const MAX_ANSWER = 4 * 1024 * 1024;

/** `ubuntu`, `team/app` -> Docker Hub; `host:5000/app`, `localhost/app` -> that registry. */
function splitSearchTerm(term: string): { domain: string; remote: string } {
  const slash = term.indexOf("/");
  const first = slash < 0 ? "" : term.slice(0, slash);
  if (slash < 0 || (!first.includes(".") && !first.includes(":") && first !== "localhost")) return { domain: DEFAULT_DOMAIN, remote: term };
  const domain = /^(index\.|registry-1\.)?docker\.io$/.test(first) ? DEFAULT_DOMAIN : first;
  return { domain, remote: term.slice(slash + 1) };
}

async function endpointsOf(registry: RegistryService, domain: string): Promise<Endpoint[]> {
  if (domain === DEFAULT_DOMAIN) return [{ url: `https://${HUB_INDEX}`, host: HUB_INDEX, verifyTls: true, mirror: false, insecure: false }];
  return registry.endpoints(domain, "login");
}

function toResult(r: Record<string, unknown>): SearchResult {
  return {
    name: String(r.name ?? ""),
    description: String(r.description ?? ""),
    star_count: Number(r.star_count ?? 0) || 0,
    is_official: r.is_official === true,
    // deprecated, and untrustworthy where it is still sent: always false, as Docker
    is_automated: false,
  };
}

export async function searchRegistry(
  registry: RegistryService,
  term: string,
  limit: number,
  filters: SearchFilters,
  credentials: Credentials | undefined,
): Promise<SearchResult[]> {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(term)) throw errors.apiInvalidBody(`invalid repository name: repository name (${term}) should not have a scheme`);
  const { domain, remote } = splitSearchTerm(term);
  if (filters.automatedOnly) return [];
  const q = domain === DEFAULT_DOMAIN ? remote.replace(/^library\//, "") : remote;
  const signal = AbortSignal.timeout(TIMEOUT_MS);
  const headers: Record<string, string> = { "user-agent": "engine", accept: "application/json" };
  if (credentials && (credentials.username || credentials.password)) headers.authorization = basicHeader(credentials);
  let lastFailure = "no endpoint answered";
  for (const endpoint of await endpointsOf(registry, domain)) {
    const url = `${endpoint.url}/v1/search?q=${encodeURIComponent(q)}&n=${limit}`;
    let res;
    try {
      res = await undici().request(url, { method: "GET", headers, dispatcher: registry.transport.dispatcherFor(endpoint), signal });
    } catch (err) {
      const cause = err as Error;
      lastFailure = signal.aborted ? `no answer in ${TIMEOUT_MS / 1000} s` : new ConnectError(url, cause).message;
      if (signal.aborted) break;
      continue;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        chunks.push(chunk);
        size += chunk.length;
        if (size > MAX_ANSWER) break;
      }
    } catch (err) {
      // an answer cut off, or too slow to finish in time
      throw errors.registrySearchUnavailable(endpoint.host, signal.aborted ? `no whole answer in ${TIMEOUT_MS / 1000} s` : (err as Error).message);
    }
    if (size > MAX_ANSWER) {
      res.body.destroy();
      throw errors.registrySearchUnavailable(endpoint.host, `GET ${endpoint.url}/v1/search answered more than ${MAX_ANSWER} bytes`);
    }
    const text = Buffer.concat(chunks).toString("utf8");
    if (res.statusCode === 401 || res.statusCode === 403) throw errors.registryUnauthorized(`search on ${endpoint.host}: ${res.statusCode} answered`);
    if (res.statusCode !== 200) throw errors.registrySearchUnavailable(endpoint.host, `it offers no search (GET ${endpoint.url}/v1/search answered ${res.statusCode})`);
    let body: { results?: Record<string, unknown>[] };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      throw errors.registrySearchUnavailable(endpoint.host, `GET ${endpoint.url}/v1/search did not answer JSON`);
    }
    return (body.results ?? [])
      .map(toResult)
      .filter((r) => (filters.isOfficial === undefined || r.is_official === filters.isOfficial) && r.star_count >= filters.stars);
  }
  throw errors.registrySearchUnavailable(domain === DEFAULT_DOMAIN ? HUB_INDEX : domain, lastFailure);
}
