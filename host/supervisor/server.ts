/**
 * The supervisor's API: JSON over HTTP on a unix socket, for engined (see client.ts).
 *   GET    /v1/ping                      -> {"namespace"}
 *   GET    /v1/containers                -> [state]
 *   POST   /v1/containers   {RunRequest} -> 201 state
 *   GET    /v1/containers/ID             -> state
 *   POST   /v1/containers/ID/wait        -> {"exitCode"} when it has exited (the answer waits)
 *   POST   /v1/containers/ID/kill?signal=TERM
 *   POST   /v1/containers/ID/stop?t=10&signal=TERM -> {"exitCode"} (t=-1: no SIGKILL)
 *   DELETE /v1/containers/ID?force=1
 *   GET    /v1/containers/ID/logs        -> [{time, stream, partial, line}]
 *   POST   /v1/containers/ID/resize?h=&w=
 *   POST   /v1/containers/ID/hold        -> 200 at once; conmon waits until the connection closes
 *   POST   /v1/containers/ID/follow?ino= -> 200 at once: a follower of the spool, for as long as the
 *                                           connection stays open; the request's body goes on,
 *                                           a line (the inode of the file it reads, or empty)
 *                                           when it moves on and once a second
 *   POST   /v1/containers/ID/pause, /resume  (the runtime's freezer)
 *   POST   /v1/containers/ID/update {OCI LinuxResources} (`runtime update`)
 *   POST   /v1/containers/ID/reopen-log (conmon reopens the log at the run request's logPath)
 *   POST   /v1/containers/ID/execs {ExecRequest} -> 201 {execId, pid, attachPath, ctlPath, logPath, exitDir}
 *   POST   /v1/containers/ID/execs/EXEC/wait -> {"exitCode"} when it has exited (the answer waits)
 *   POST   /v1/containers/ID/execs/EXEC/resize?h=&w=
 *   DELETE /v1/containers/ID/execs/EXEC
 *   GET    /v1/events                    -> newline-delimited {"type":"exit","id","exitCode"}, for as
 *                                           long as the connection stays open
 * Errors are {"message"} with the status of the SupervisorError.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { http } from "../../core/node-http.js";
import { Supervisor, SupervisorError, type ExecRequest, type RunRequest } from "./supervisor.js";

function send(res: ServerResponse, status: number, body?: unknown): void {
  const text = body === undefined ? "" : JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 1024 * 1024) throw new SupervisorError(413, "request body too large");
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new SupervisorError(400, "the request body is not JSON");
  }
}

export function supervisorServer(sup: Supervisor): Server {
  // No limit on receiving a request: a follower's (`follow`) lasts as long as its attach.
  return http.createServer({ requestTimeout: 0 }, (req, res) => {
    handle(sup, req, res).catch((err: Error) => {
      const status = err instanceof SupervisorError ? err.status : 500;
      if (!res.headersSent) send(res, status, { message: err.message });
      else res.destroy();
    });
  });
}

async function handle(sup: Supervisor, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "http://supervisor");
  const parts = url.pathname.split("/").filter(Boolean);
  if (parts[0] !== "v1") throw new SupervisorError(404, "not found");
  if (parts[1] === "ping") return send(res, 200, { namespace: sup.namespace, pid: process.pid });
  if (parts[1] === "events" && req.method === "GET") return streamEvents(sup, req, res);
  if (parts[1] !== "containers") throw new SupervisorError(404, "not found");
  const id = parts[2];
  const action = parts[3];
  if (!id) {
    if (req.method === "GET") return send(res, 200, sup.list());
    if (req.method === "POST") return send(res, 201, await sup.run(checkRun(await readJson(req))));
  } else if (!action) {
    if (req.method === "GET") return send(res, 200, sup.get(id));
    if (req.method === "DELETE") {
      await sup.remove(id, url.searchParams.get("force") === "1");
      return send(res, 204);
    }
  } else if (req.method === "POST" && action === "wait") {
    // The answer waits for the exit; a client that goes away stops the wait.
    return send(res, 200, { exitCode: await sup.wait(id, whileAnswerPending(res)) });
  } else if (req.method === "POST" && action === "kill") {
    await sup.kill(id, url.searchParams.get("signal") ?? "KILL");
    return send(res, 204);
  } else if (req.method === "POST" && action === "stop") {
    const seconds = Number(url.searchParams.get("t") ?? "10");
    if (!Number.isInteger(seconds)) throw new SupervisorError(400, `invalid stop timeout "${url.searchParams.get("t")}"`);
    return send(res, 200, { exitCode: await sup.stop(id, seconds * 1000, url.searchParams.get("signal") ?? "TERM") });
  } else if (req.method === "GET" && action === "logs") {
    // (as text: a diagnostic read, which JSON cannot carry as bytes)
    return send(res, 200, (await sup.logs(id)).map((l) => ({ ...l, line: l.line.toString("utf8") })));
  } else if (req.method === "POST" && action === "hold") {
    return holdOutput(sup, id, req, res);
  } else if (req.method === "POST" && action === "follow") {
    return followSpool(sup, id, inodeParam(url), req, res);
  } else if (req.method === "POST" && action === "resize") {
    await sup.resize(id, dimension(url, "h"), dimension(url, "w"));
    return send(res, 204);
  } else if (req.method === "POST" && action === "reopen-log") {
    await sup.reopenLog(id);
    return send(res, 204);
  } else if (req.method === "POST" && (action === "pause" || action === "resume")) {
    await sup.freeze(id, action);
    return send(res, 204);
  } else if (req.method === "POST" && action === "update") {
    const body = await readJson(req);
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw new SupervisorError(400, "an update needs an object of OCI resources");
    await sup.update(id, body as Record<string, unknown>);
    return send(res, 204);
  } else if (action === "execs") {
    return handleExec(sup, id, parts[4], parts[5], req, res, url);
  }
  throw new SupervisorError(404, "not found");
}

async function handleExec(sup: Supervisor, id: string, execId: string | undefined, action: string | undefined, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  if (!execId && req.method === "POST") return send(res, 201, await sup.exec(id, checkExec(await readJson(req))));
  if (execId && !action && req.method === "DELETE") {
    sup.execRemove(id, execId);
    return send(res, 204);
  }
  if (execId && action === "wait" && req.method === "POST") {
    return send(res, 200, { exitCode: await sup.execWait(id, execId, whileAnswerPending(res)) });
  }
  if (execId && action === "resize" && req.method === "POST") {
    await sup.execResize(id, execId, dimension(url, "h"), dimension(url, "w"));
    return send(res, 204);
  }
  throw new SupervisorError(404, "not found");
}

/**
 * A signal that fires when the client goes away before its answer. The response's own `close`,
 * not the socket's: engined's keep-alive connections carry request after request, and a
 * listener per request on the socket piled up for as long as the connection lived.
 */
function whileAnswerPending(res: ServerResponse): AbortSignal {
  const abort = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) abort.abort();
  });
  return abort.signal;
}

function dimension(url: URL, name: string): number {
  const value = Number(url.searchParams.get(name));
  if (!Number.isInteger(value) || value < 0 || value > 65535) throw new SupervisorError(400, `invalid ${name} "${url.searchParams.get(name)}"`);
  return value;
}

function checkExec(body: unknown): ExecRequest {
  const b = body as Partial<ExecRequest> | null;
  if (!b || typeof b.execId !== "string" || typeof b.process !== "object" || b.process === null || !Array.isArray((b.process as { args?: unknown }).args)) {
    throw new SupervisorError(400, "an exec request needs execId and a process with args");
  }
  return { execId: b.execId, process: b.process, terminal: b.terminal === true, stdin: b.stdin === true, leaveStdinOpen: b.leaveStdinOpen === true };
}

/** A hold of the container's output (an attached client that does not read): it lasts as long as the connection. */
function holdOutput(sup: Supervisor, id: string, req: IncomingMessage, res: ServerResponse): void {
  const release = sup.hold(id);
  res.writeHead(200, { "content-type": "application/json" });
  res.flushHeaders();
  if (req.socket.destroyed) release();
  else req.socket.once("close", release);
}

function inodeParam(url: URL): number | undefined {
  const raw = url.searchParams.get("ino");
  if (raw === null || raw === "") return undefined;
  if (!/^\d{1,15}$/.test(raw)) throw new SupervisorError(400, `invalid inode "${raw}"`);
  return Number(raw);
}

/** A follower of the container's spool (spool-followers.ts): it lasts as long as the connection, and reports in its request's body. */
function followSpool(sup: Supervisor, id: string, ino: number | undefined, req: IncomingMessage, res: ServerResponse): void {
  const follower = sup.follow(id, ino, () => req.socket.destroy());
  res.writeHead(200, { "content-type": "application/json" });
  res.flushHeaders();
  let rest = "";
  req.setEncoding("utf8");
  req.on("data", (text: string) => {
    const lines = (rest + text).split("\n");
    rest = lines.pop()!.slice(-32); // a line is a number: anything longer is not one
    for (const line of lines) follower.report(/^\d{1,15}$/.test(line) ? Number(line) : undefined);
  });
  req.once("end", () => {
    follower.close();
    res.end();
  });
  if (req.socket.destroyed) follower.close();
  else req.socket.once("close", follower.close);
}

/** Exits as they happen, one JSON object per line; a blank line every 30 s keeps idle proxies and timers from closing it. */
function streamEvents(sup: Supervisor, req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, { "content-type": "application/x-ndjson" });
  res.flushHeaders();
  const unsubscribe = sup.subscribe((event) => res.write(`${JSON.stringify(event)}\n`));
  const keepAlive = setInterval(() => res.write("\n"), 30_000);
  req.socket.once("close", () => {
    unsubscribe();
    clearInterval(keepAlive);
  });
}

function checkRun(body: unknown): RunRequest {
  const b = body as Partial<RunRequest> | null;
  if (!b || typeof b.id !== "string" || typeof b.bundle !== "string" || !b.bundle.startsWith("/") || typeof b.runtime?.path !== "string") {
    throw new SupervisorError(400, "a run request needs id, an absolute bundle path and runtime.path");
  }
  if (b.log !== undefined && (typeof b.log.driver !== "string" || typeof b.log.context?.logDir !== "string" || typeof b.log.context.containerId !== "string")) {
    throw new SupervisorError(400, "log needs a driver name and a context with containerId and logDir");
  }
  if (b.logPath !== undefined && (typeof b.logPath !== "string" || !b.logPath.startsWith("/"))) throw new SupervisorError(400, "logPath must be an absolute path");
  if (b.logPath !== undefined && b.log !== undefined) throw new SupervisorError(400, "logPath and log exclude each other: a log driver drains the spool in the supervisor's folder");
  return {
    id: b.id,
    bundle: b.bundle,
    ...(b.logPath ? { logPath: b.logPath } : {}),
    runtime: { path: b.runtime.path, ...(b.runtime.args ? { args: b.runtime.args } : {}) },
    ...(b.log ? { log: b.log } : {}),
    ...(b.noPivot === true ? { noPivot: true } : {}),
    ...(b.terminal === true ? { terminal: true } : {}),
    ...(b.stdin === true ? { stdin: true } : {}),
    ...(b.leaveStdinOpen === true ? { leaveStdinOpen: true } : {}),
  };
}
