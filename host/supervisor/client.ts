/** engined's client of the supervisor's API (server.ts), over its unix socket. */
import { http } from "../../core/node-http.js";
import type { Pool } from "undici";
import { undici } from "../http/undici.js";
import type { K8sLogLine } from "./k8s-file.js";
import { SpoolFollowReport } from "./follow-client.js";
import type { ContainerState, ExecRequest, ExecState, ExitEvent, RunRequest } from "./supervisor.js";

export class SupervisorClientError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class SupervisorClient {
  // A pool, not one connection: a stop waits out its grace period and must not hold up a start.
  private readonly http: Pool;

  constructor(readonly socket: string) {
    this.http = new (undici().Pool)("http://supervisor", { socketPath: socket, bodyTimeout: 0, headersTimeout: 0, connections: 64 });
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

  ping(signal?: AbortSignal): Promise<{ namespace: string; pid: number }> {
    return this.call("GET", "/v1/ping", undefined, signal);
  }

  /**
   * Calls `onExit` for every exit the supervisor announces until `signal` aborts; resolves when
   * the stream ends (the supervisor went away: the caller reconnects and lists to catch up).
   * `onOpen` is called once the subscription stands.
   */
  async events(onExit: (event: ExitEvent) => void, signal: AbortSignal, onOpen?: () => void): Promise<void> {
    const res = await this.http.request({ method: "GET", path: "/v1/events", signal });
    if (res.statusCode !== 200) throw new SupervisorClientError(res.statusCode, await res.body.text());
    // Subscribed from here on: what exited before, the caller learns by listing.
    onOpen?.();
    let buf = "";
    try {
      for await (const chunk of res.body) {
        buf += (chunk as Buffer).toString("utf8");
        let nl: number;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (line) onExit(JSON.parse(line) as ExitEvent);
        }
      }
    } catch (err) {
      if (!signal.aborted) throw err;
    }
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
  async stop(id: string, seconds: number, signal = "TERM"): Promise<number> {
    const query = `t=${seconds}&signal=${encodeURIComponent(signal)}`;
    return (await this.call<{ exitCode: number }>("POST", `/v1/containers/${encodeURIComponent(id)}/stop?${query}`)).exitCode;
  }
  async remove(id: string, force = false): Promise<void> {
    await this.call("DELETE", `/v1/containers/${encodeURIComponent(id)}${force ? "?force=1" : ""}`);
  }
  async resize(id: string, height: number, width: number): Promise<void> {
    await this.call("POST", `/v1/containers/${encodeURIComponent(id)}/resize?h=${height}&w=${width}`);
  }
  exec(id: string, req: ExecRequest): Promise<ExecState> {
    return this.call("POST", `/v1/containers/${encodeURIComponent(id)}/execs`, req);
  }
  async execWait(id: string, execId: string, signal?: AbortSignal): Promise<number> {
    return (await this.call<{ exitCode: number }>("POST", `/v1/containers/${encodeURIComponent(id)}/execs/${encodeURIComponent(execId)}/wait`, undefined, signal)).exitCode;
  }
  async execResize(id: string, execId: string, height: number, width: number): Promise<void> {
    await this.call("POST", `/v1/containers/${encodeURIComponent(id)}/execs/${encodeURIComponent(execId)}/resize?h=${height}&w=${width}`);
  }
  async execRemove(id: string, execId: string): Promise<void> {
    await this.call("DELETE", `/v1/containers/${encodeURIComponent(id)}/execs/${encodeURIComponent(execId)}`);
  }
  async freeze(id: string, action: "pause" | "resume"): Promise<void> {
    await this.call("POST", `/v1/containers/${encodeURIComponent(id)}/${action}`);
  }
  async update(id: string, resources: Record<string, unknown>): Promise<void> {
    await this.call("POST", `/v1/containers/${encodeURIComponent(id)}/update`, resources);
  }
  async reopenLog(id: string): Promise<void> {
    await this.call("POST", `/v1/containers/${encodeURIComponent(id)}/reopen-log`);
  }
  /**
   * Holds the container's output (its conmon waits) for as long as `signal` has not aborted;
   * resolves once the hold stands. A connection of its own, outside the pool: a hold lasts as
   * long as a client does not read, and must not keep a stop or a start waiting for a slot;
   * engined's end closes it, and the supervisor lets the container go on.
   */
  hold(id: string, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const req = http.request({ socketPath: this.socket, method: "POST", path: `/v1/containers/${encodeURIComponent(id)}/hold`, agent: false });
      const end = () => req.destroy();
      signal.addEventListener("abort", end, { once: true });
      const failed = (err: Error) => {
        signal.removeEventListener("abort", end);
        if (signal.aborted) resolve();
        else reject(err);
      };
      req.once("error", failed);
      req.once("response", (res) => {
        res.once("close", () => signal.removeEventListener("abort", end));
        if (res.statusCode === 200) {
          res.resume();
          return resolve();
        }
        let text = "";
        res.on("data", (d: Buffer) => (text += d.toString("utf8")));
        res.once("end", () => {
          let message = text;
          try {
            message = (JSON.parse(text) as { message?: string }).message ?? text;
          } catch {
            // not JSON: the text as it came
          }
          failed(new SupervisorClientError(res.statusCode ?? 500, message));
        });
      });
      req.end();
    });
  }
  /**
   * Registers a follower of the container's spool (it need not run yet): the supervisor keeps
   * the spool's files until the follower has read them, until `close()` (follow-client.ts).
   */
  async follow(id: string): Promise<SpoolFollowReport> {
    const report = new SpoolFollowReport(this.socket, id);
    await report.start();
    return report;
  }
  /** What the spool holds now, each line as UTF-8 text. */
  logs(id: string): Promise<(Omit<K8sLogLine, "line"> & { line: string })[]> {
    return this.call("GET", `/v1/containers/${encodeURIComponent(id)}/logs`);
  }
  close(): Promise<void> {
    return this.http.close();
  }
}
