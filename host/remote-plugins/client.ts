/**
 * The HTTP side of the plugin protocol: `POST /<Interface>.<Method>` with a JSON body, a JSON
 * answer. Connections are kept alive (two calls per API request otherwise pay two connects);
 * idle ones close after a few seconds, so a plugin removed by a reload leaves nothing open.
 * Every call has a deadline; there is no retry: a request waiting on a plugin that is down is
 * denied at once rather than held for Docker's 30 seconds of back-off.
 */
import { readFileSync } from "node:fs";
import type { RequestOptions } from "node:http";
import { http } from "../../core/node-http.js";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { Socket } from "node:net";
import type { PluginEndpoint } from "./discover.js";
import { connectUnix, MAX_SOCKET_PATH } from "./unix-connect.js";

/** The protocol's media type: plugins written for Docker's daemon answer to it. */
const PLUGIN_MEDIA_TYPE = "application/vnd.docker.plugins.v1.2+json";
const IDLE_CLOSE_MS = 5_000;
/** A plugin answer is a small JSON object; anything past this is not one. */
const MAX_ANSWER = 1024 * 1024;

/** A call that failed; `status` is the plugin's HTTP status when it answered one (404: a method it does not serve). */
export class PluginCallError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** A call a plugin need not serve: its 404 is no failure (Docker's plugins.IsNotFound), and resolves undefined. */
export async function optional<T>(pending: Promise<T>): Promise<T | undefined> {
  try {
    return await pending;
  } catch (err) {
    if (err instanceof PluginCallError && err.status === 404) return undefined;
    throw err;
  }
}

export class PluginClient {
  private readonly target: RequestOptions;
  private readonly secure: boolean;

  constructor(private readonly endpoint: PluginEndpoint) {
    const { address, tls } = endpoint;
    this.secure = tls !== undefined;
    if (address.startsWith("unix://")) {
      const path = address.slice("unix://".length);
      const agent = new http.Agent({ keepAlive: true, timeout: IDLE_CLOSE_MS });
      // a path longer than a socket address holds is reached through its folder (unix-connect.ts),
      // with the idle timeout the agent gives its sockets
      if (Buffer.byteLength(path) > MAX_SOCKET_PATH) {
        (agent as unknown as { createConnection: (o: { timeout?: number }) => Socket }).createConnection = (o) => {
          const socket = connectUnix(path);
          if (o.timeout) socket.setTimeout(o.timeout);
          return socket;
        };
      }
      this.target = { socketPath: path, agent };
      return;
    }
    const url = new URL(address.replace(/^tcp:/, this.secure ? "https:" : "http:"));
    const common = { keepAlive: true, timeout: IDLE_CLOSE_MS };
    this.target = {
      host: url.hostname.replace(/^\[|\]$/g, ""),
      port: Number(url.port || (this.secure ? 443 : 80)),
      agent: tls
        ? new HttpsAgent({
            ...common,
            ca: tls.caFile ? readFileSync(tls.caFile) : undefined,
            cert: tls.certFile ? readFileSync(tls.certFile) : undefined,
            key: tls.keyFile ? readFileSync(tls.keyFile) : undefined,
            rejectUnauthorized: !tls.insecureSkipVerify,
          })
        : new http.Agent(common),
    };
  }

  /** Calls `method` (`Plugin.Activate`) and resolves with the parsed answer. */
  call(method: string, body: unknown): Promise<unknown> {
    const payload = body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(body));
    const { address, timeoutMs } = this.endpoint;
    return new Promise((resolve, reject) => {
      const send = this.secure ? httpsRequest : http.request;
      const req = send(
        {
          ...this.target,
          method: "POST",
          path: `/${method}`,
          headers: { accept: PLUGIN_MEDIA_TYPE, "content-type": PLUGIN_MEDIA_TYPE, "content-length": payload.length },
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on("data", (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_ANSWER) req.destroy(new PluginCallError(`${method}: the answer is larger than ${MAX_ANSWER} bytes`));
            else chunks.push(chunk);
          });
          res.on("end", () => {
            clearTimeout(timer);
            const text = Buffer.concat(chunks).toString("utf8");
            let parsed: unknown;
            try {
              parsed = text.trim() === "" ? {} : JSON.parse(text);
            } catch {
              parsed = undefined;
            }
            if (res.statusCode !== 200) {
              const err = (parsed as { Err?: unknown } | undefined)?.Err;
              // Docker's plugin client: the method, then the answer's Err, else its body as sent
              if (typeof err === "string" && err !== "") return reject(new PluginCallError(`${method}: ${err}`, res.statusCode));
              return reject(new PluginCallError(`${method}: ${text.trim() || `status ${res.statusCode} without a body`}`, res.statusCode));
            }
            if (parsed === undefined) return reject(new PluginCallError(`${method}: the answer is not JSON: ${text.slice(0, 200)}`));
            resolve(parsed);
          });
          res.on("error", (err) => reject(callError(address, err)));
        },
      );
      const timer = setTimeout(() => req.destroy(new PluginCallError(`no answer from ${address} to ${method} within ${timeoutMs / 1000}s`)), timeoutMs);
      req.on("error", (err) => {
        clearTimeout(timer);
        reject(callError(address, err));
      });
      req.end(payload);
    });
  }
}

function callError(address: string, err: Error): Error {
  if (err instanceof PluginCallError) return err;
  return new PluginCallError(`cannot reach the plugin at ${address}: ${err.message}`);
}
