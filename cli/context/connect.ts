/**
 * How a command connects through a stored context, as the Docker CLI makes its client from one:
 * the docker endpoint's host (the default socket when it has none); on tcp://, TLS when the
 * context holds TLS files or skips verification: its ca.pem (else the system's CAs) unless
 * SkipTLSVerify, its cert.pem and key.pem as the client's certificate. The global TLS flags
 * belong to the "default" context and play no part here. Loaded only when a context is used.
 */
import type { ConnectionSettings } from "../connection.js";
import { HostError, parseTarget } from "../transport/dial.js";
import { DOCKER_ENDPOINT, dockerEndpoint } from "./metadata.js";
import { ContextStore } from "./store.js";

export function contextConnection(configDir: string, name: string, env: NodeJS.ProcessEnv): ConnectionSettings {
  const failed = (why: string) => new HostError(`Failed to initialize: unable to resolve docker endpoint: ${why}`);
  const store = new ContextStore(configDir);
  let endpoint;
  let files: Record<string, Buffer>;
  try {
    endpoint = dockerEndpoint(store.get(name));
    files = store.readAllTls(name)[DOCKER_ENDPOINT] ?? {};
  } catch (e) {
    throw failed((e as Error).message);
  }
  if (!endpoint) throw failed("cannot find docker endpoint in context");
  const useTls = Object.keys(files).length > 0 || endpoint.SkipTLSVerify;
  const target = parseTarget(endpoint.Host ?? "", useTls);
  const tls = useTls && target.proto === "tcp" ? { verify: !endpoint.SkipTLSVerify, ca: files["ca.pem"], cert: files["cert.pem"], key: files["key.pem"] } : undefined;
  return { target, tls, env };
}
