/** engined's client of the supervisor's API (server.ts), over its unix socket. */
import { Client } from "undici";
import type { K8sLogLine } from "./conmon.js";
import type { ContainerState, RunRequest } from "./supervisor.js";

export class SupervisorClientError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class SupervisorClient {
  private readonly http: Client;

  constructor(readonly socket: string) {
    this.http = new Client("http://supervisor", { socketPath: socket, bodyTimeout: 0, headersTimeout: 0 });
  }

  private async call<T>(method: "GET" | "POST" | "DELETE", path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const res = await this.http.request({
      method,
      path,
      signal,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
    });
    const text = await res.body.text();
    const json = text ? (JSON.parse(text) as unknown) : undefined;
    if (res.statusCode >= 400) throw new SupervisorClientError(res.statusCode, (json as { message?: string })?.message ?? text);
    return json as T;
  }

  ping(): Promise<{ namespace: string }> {
    return this.call("GET", "/v1/ping");
  }
  run(req: RunRequest): Promise<ContainerState> {
    return this.call("POST", "/v1/containers", req);
  }
  get(id: string): Promise<ContainerState> {
    return this.call("GET", `/v1/containers/${encodeURIComponent(id)}`);
  }
  list(): Promise<ContainerState[]> {
    return this.call("GET", "/v1/containers");
  }
  async wait(id: string, signal?: AbortSignal): Promise<number> {
    return (await this.call<{ exitCode: number }>("POST", `/v1/containers/${encodeURIComponent(id)}/wait`, undefined, signal)).exitCode;
  }
  async kill(id: string, signal: string): Promise<void> {
    await this.call("POST", `/v1/containers/${encodeURIComponent(id)}/kill?signal=${encodeURIComponent(signal)}`);
  }
  async stop(id: string, seconds: number): Promise<number> {
    return (await this.call<{ exitCode: number }>("POST", `/v1/containers/${encodeURIComponent(id)}/stop?t=${seconds}`)).exitCode;
  }
  async remove(id: string, force = false): Promise<void> {
    await this.call("DELETE", `/v1/containers/${encodeURIComponent(id)}${force ? "?force=1" : ""}`);
  }
  logs(id: string): Promise<K8sLogLine[]> {
    return this.call("GET", `/v1/containers/${encodeURIComponent(id)}/logs`);
  }
  close(): Promise<void> {
    return this.http.close();
  }
}
