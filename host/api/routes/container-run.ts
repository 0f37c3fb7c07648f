/**
 * The container endpoints that touch a running process: start, stop, restart, kill, wait,
 * logs and attach. The work is the ContainerService's (host/containers/container-service.ts); here are Docker's
 * shapes: 204/304, `{StatusCode}` with the headers sent at once, multiplexed frames, and the
 * hijacked attach connection.
 */
import type { Duplex } from "node:stream";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { LogMessage, ReadOptions } from "../../../core/contracts/log.js";
import type { ContainerRecord, ContainerStore } from "../../../core/containers/container-store.js";
import { containerTarget } from "./container-target.js";
import { parseSignal, signalNumberOf } from "../../../core/containers/signals.js";
import { EngineError, errors } from "../../../core/errors.js";
import { formatRFC3339NanoFixed } from "../../../core/rfc3339-nano.js";
import type { DaemonConfig } from "../../../core/options/table.js";
import { logSettings, loggerContext } from "../../containers/log-settings.js";
import type { ContainerService, WaitCondition } from "../../containers/container-service.js";
import type { LogDriverSource } from "../../plugins/log-drivers.js";
import { requestedApiVersion } from "../api-version.js";
import { rawResponse } from "../raw-response.js";
import { forwardInput, hijack, refuseAttach, type InputSink } from "../hijack.js";
import { acceptWebSocket } from "../websocket.js";
import { compareApiVersions } from "../../../core/version.js";
import { AttachInput, INPUT_BUFFER_BYTES } from "../../containers/attach-socket.js";
import { spoolReader, type SpoolReader } from "../../containers/spool-reader.js";
import { detachKeysOf } from "../../containers/detach-keys.js";
import { queryBool, queryString, type Query } from "../query.js";
import { frame, streamContentType } from "../stream-frames.js";
import { ClientStream } from "../client-stream.js";
import { outputReads } from "../output-reads.js";
import { outputHold } from "../../containers/output-hold.js";

/** How long an attached client may leave its stream unread before the container's output waits for it. */
const ATTACH_STALL_MS = 100;

export interface ContainerRunDeps {
  containers: ContainerStore;
  service: ContainerService;
  logDrivers: LogDriverSource;
  config: () => DaemonConfig;
}

const WAIT_CONDITIONS: readonly WaitCondition[] = ["not-running", "next-exit", "removed"];

export function containerRunRoutes(deps: ContainerRunDeps) {
  const { containers, service } = deps;
  const target = (request: FastifyRequest) => containerTarget(containers, request);

  return (app: FastifyInstance) => {
    app.post("/containers/:id/start", async (request, reply) => {
      // a body longer than an empty JSON object's few bytes, or of a length not told, is an older
      // client's HostConfig, refused before the container is looked for, as Docker's route does
      const length = request.headers["content-length"];
      if ((length !== undefined && Number(length) > 7) || (length === undefined && request.headers["transfer-encoding"] !== undefined)) throw errors.containerStartWithBody();
      const { c } = target(request);
      return reply.code((await service.start(c)) ? 204 : 304).send();
    });

    app.post("/containers/:id/stop", async (request, reply) => {
      const { c } = target(request);
      const stopped = await service.stop(c, stopOptions(request.query as Query, requestedApiVersion(request.raw)));
      return reply.code(stopped ? 204 : 304).send();
    });

    app.post("/containers/:id/restart", async (request, reply) => {
      const { c } = target(request);
      await service.restart(c, stopOptions(request.query as Query, requestedApiVersion(request.raw)));
      return reply.code(204).send();
    });

    app.post("/containers/:id/kill", async (request, reply) => {
      // Docker's router reads the signal before the daemon looks for the container; the
      // daemon's refusals (no such container, a number that is no signal) name the kill.
      const ref = (request.params as { id: string }).id;
      const raw = queryString(request.query as Query, "signal") || "KILL";
      const signal = parseSignal(raw);
      const number = signalNumberOf(raw);
      if (!signal && number === undefined) throw errors.containerInvalidSignal(raw);
      const c = killTarget(containers, ref);
      if (!signal) throw errors.containerKillUnsupportedSignal(ref, String(number));
      await service.kill(c, ref, signal);
      return reply.code(204).send();
    });

    // Before API 1.30 (Docker's route): no condition (not-running), and the headers with the body,
    // when the container stops; before 1.34 a removal that failed ends the answer without a body.
    app.post("/containers/:id/wait", async (request, reply) => {
      const { c } = target(request);
      const version = requestedApiVersion(request.raw);
      const gone = new AbortController();
      reply.raw.once("close", () => gone.abort(new Error("the client went away")));
      if (compareApiVersions(version, "1.30") < 0) {
        const code = await service.wait(c, "not-running", gone.signal);
        return reply.type("application/json").send(`${JSON.stringify({ StatusCode: code, Error: null })}\n`);
      }
      const condition = (queryString(request.query as Query, "condition") || "not-running") as WaitCondition;
      if (!WAIT_CONDITIONS.includes(condition)) throw errors.containerInvalidWaitCondition(condition);
      // The headers go at once (clients start the container after they have them); the body when the condition holds.
      const res = rawResponse(reply, 200, { "content-type": "application/json" });
      try {
        const code = await service.wait(c, condition, gone.signal);
        res.end(`${JSON.stringify({ StatusCode: code, Error: null })}\n`);
      } catch (err) {
        if (gone.signal.aborted) return;
        const silent = condition === "removed" && compareApiVersions(version, "1.34") < 0;
        res.end(silent ? "" : `${JSON.stringify({ StatusCode: -1, Error: { Message: (err as Error).message } })}\n`);
      }
    });

    app.get("/containers/:id/logs", async (request, reply) => {
      const { c } = target(request);
      const query = request.query as Query;
      const stdout = queryBool(query, "stdout");
      const stderr = queryBool(query, "stderr");
      if (!stdout && !stderr) throw errors.containerLogsNoStream();
      const reader = await readerOf(deps, c);
      const follow = queryBool(query, "follow");
      const tty = c.Config.Tty === true;
      // read before the answer's headers go, so that a bad one is an error the client sees
      const [since, until, tail] = [timeQuery(query, "since"), timeQuery(query, "until"), tailQuery(query)];
      const res = rawResponse(reply, 200, { "content-type": streamContentType(requestedApiVersion(request.raw), tty) });
      // The reader reads on only as the client reads; it ends when the client goes away.
      const client = new ClientStream(res);
      const messages = reader.read({
        follow: follow && c.State.Running,
        stdout,
        stderr,
        since: since?.date,
        until: until?.date,
        sinceNs: since?.ns,
        untilNs: until?.ns,
        tail,
        signal: client.signal,
        producerDone: service.stopped(c, client.signal),
      });
      await sendMessages(messages, client, { tty, timestamps: queryBool(query, "timestamps"), details: queryBool(query, "details") });
      client.end();
    });

    app.post("/containers/:id/resize", async (request, reply) => {
      const { c } = target(request);
      const { height, width } = terminalSize(request.query as Query);
      await service.resize(c, height, width);
      return reply.code(200).send();
    });

    app.post("/containers/:id/attach", async (request, reply) => {
      const query = request.query as Query;
      let c: ContainerRecord;
      let detachKeys: Buffer;
      let reader: SpoolReader;
      try {
        // (the keys first, as Docker's ContainerAttach reads them)
        detachKeys = detachKeysOf(queryString(query, "detachKeys"));
        ({ c } = target(request));
        checkAttachable((request.params as { id: string }).id, c);
        reader = await attachReaderOf(deps, c, queryBool(query, "logs"));
      } catch (err) {
        if (!(err instanceof EngineError)) throw err;
        return refuseAttach(request, reply, err.statusCode, err.message);
      }
      const tty = c.Config.Tty === true;
      await attach(service, c, reader, hijack(request, reply, tty, { daemonHeaders: false }), {
        stdin: queryBool(query, "stdin"),
        stdout: queryBool(query, "stdout"),
        stderr: queryBool(query, "stderr"),
        logs: queryBool(query, "logs"),
        stream: queryBool(query, "stream"),
        detachKeys,
        multiplexed: !tty,
      });
    });

    // The same attachment over a WebSocket: the output raw (one data frame per read of the
    // container's pipe, stdout and stderr alike), the client's data frames its input. Before
    // API 1.42 Docker's daemon attaches all three streams whatever the query says.
    app.get("/containers/:id/attach/ws", async (request, reply) => {
      const { ref, c } = target(request);
      const query = request.query as Query;
      const detachKeys = detachKeysOf(queryString(query, "detachKeys"));
      checkAttachable(ref, c);
      const reader = await attachReaderOf(deps, c, queryBool(query, "logs"));
      const version = requestedApiVersion(request.raw);
      const socket = acceptWebSocket(request, reply, { binary: compareApiVersions(version, "1.28") >= 0 });
      if (!socket) return;
      const all = compareApiVersions(version, "1.42") < 0;
      await attach(service, c, reader, socket, {
        stdin: all || queryBool(query, "stdin"),
        stdout: all || queryBool(query, "stdout"),
        stderr: all || queryBool(query, "stderr"),
        logs: queryBool(query, "logs"),
        stream: queryBool(query, "stream"),
        detachKeys,
        multiplexed: false,
      });
    });
  };
}

/** Docker's refusals of an attachment: a paused or restarting container, named as the client named it. */
function checkAttachable(ref: string, c: ContainerRecord): void {
  if (c.State.Paused) throw errors.containerAttachPaused(ref);
  if (c.State.Restarting) throw errors.containerAttachRestarting(ref);
}

interface AttachOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  /** Replay what is stored first. */
  logs: boolean;
  /** Follow (else a one-shot read of what is stored, with `logs`). */
  stream: boolean;
  detachKeys: Buffer;
  /** Docker's multiplexed frames (a hijacked connection without a TTY); else the bytes raw. */
  multiplexed: boolean;
}

/** An attachment on a connection taken over: the container's output to it, its input to the container. */
async function attach(service: ContainerService, c: ContainerRecord, reader: SpoolReader, socket: Duplex, opts: AttachOptions): Promise<void> {
  service.attached(c);
  // As Docker's attach: while the client does not read, the container's output waits (its
  // conmon is held, and the container blocks on its full pipe); logs and other readers too.
  const hold = outputHold(service, c);
  // Aborted when the client goes away or detaches: the output stops then.
  const gone = new AbortController();
  const client = new ClientStream(socket, { onStall: hold.set, stallMs: ATTACH_STALL_MS, until: gone.signal });
  client.signal.addEventListener("abort", () => gone.abort(), { once: true });
  if (opts.stream && opts.stdin && c.Config.OpenStdin) {
    // the detach keys are a terminal's: without one the input goes through byte for byte, as
    // Docker copies it (piped data holds any two bytes, ctrl-p ctrl-q too)
    const keys = c.Config.Tty === true ? opts.detachKeys : NO_DETACH_KEYS;
    // the input goes once the output is followed, as Docker's attach subscribes to the
    // streams first: an answer to the first input is not missed
    const following = opts.stdout || opts.stderr ? reader.positioned : Promise.resolve();
    void following.then(() => {
      if (!gone.signal.aborted && !socket.destroyed) return attachStdin(service, c, socket, keys, gone);
    });
  } else {
    socket.resume(); // no stdin wanted (or none open): what the client sends is read and dropped
  }
  try {
    if (opts.stdout || opts.stderr) {
      const messages = reader.read({
        follow: opts.stream,
        stdout: opts.stdout,
        stderr: opts.stderr,
        tail: opts.logs ? undefined : 0,
        signal: gone.signal,
        producerDone: attachDone(service, c, gone.signal),
      });
      await sendMessages(byReads(messages), client, { tty: !opts.multiplexed, timestamps: false, details: false });
    } else if (opts.stream) {
      await attachDone(service, c, gone.signal);
    }
  } finally {
    hold.set(false);
    client.end();
  }
}

/**
 * `h` and `w` of a resize (a container's or an exec's), read as Docker's router reads them (its
 * httputils.Uint32Value, `h` first): a whole number of 0 to 2^32-1, "invalid syntax" for what is
 * no number (none, empty, a sign `+`), "value out of range" for a negative or larger one.
 */
export function terminalSize(query: Query): { height: number; width: number } {
  const size = (name: string, what: string) => {
    const raw = queryString(query, name) ?? "";
    const digits = raw.startsWith("-") ? raw.slice(1) : raw;
    const why = !/^\d+$/.test(digits) ? "invalid syntax" : raw.startsWith("-") || Number(digits) > 0xffffffff ? "value out of range" : undefined;
    if (why) throw errors.apiGoParseError(`invalid resize ${what} ${JSON.stringify(raw)}: ${why}`);
    return Number(digits);
  };
  return { height: size("h", "height"), width: size("w", "width") };
}

/** The container a kill names; Docker's daemon says that a missing one is the kill's failure. */
function killTarget(containers: ContainerStore, ref: string): ContainerRecord {
  try {
    return containers.get(ref);
  } catch (err) {
    if (err instanceof EngineError && err.code === errors.containerNotFound.code) throw errors.containerKillNotFound(ref);
    throw err;
  }
}

/** `t` and `signal` of stop and restart. */
function stopOptions(query: Query, apiVersion: string): { seconds?: number; signal?: string } {
  const t = queryString(query, "t");
  // (a stop's signal is read from API 1.42, as Docker's route reads it: before, the container's own)
  const raw = compareApiVersions(apiVersion, "1.42") >= 0 ? queryString(query, "signal") : undefined;
  const out: { seconds?: number; signal?: string } = {};
  if (t !== undefined && t !== "") {
    // a whole number Go's strconv.Atoi would take: one past what a number holds exactly is refused
    if (!/^-?\d+$/.test(t) || !Number.isSafeInteger(Number(t))) throw errors.apiInvalidParameter("t", t);
    out.seconds = Number(t);
  }
  if (raw) {
    const signal = parseSignal(raw);
    if (!signal) throw errors.containerInvalidSignal(raw);
    out.signal = signal;
  }
  return out;
}

/**
 * The client's input to the container's stdin, once the container runs (input sent before is
 * kept, up to the input's buffer: the client then waits). The client's end of input ends the
 * attachment's stdin (conmon closes the container's with it when StdinOnce), and its output
 * unless the container's stdin closes; the detach keys end the whole attachment.
 */
async function attachStdin(service: ContainerService, c: ContainerRecord, socket: Duplex, detachKeys: Buffer, gone: AbortController): Promise<void> {
  const early = new EarlyInput();
  const connected = service.running(c, gone.signal).then(async () => early.connect(new AttachInput(await service.attachPath(c))));
  connected.catch(() => early.close()); // gone before it ran, or it is not running any more: no input to give
  const how = await forwardInput(socket, early, detachKeys);
  early.close();
  // As Docker's attach (container/stream/attach.go): the end of the client's input ends the
  // attachment's output too, unless the container's stdin closes with it (StdinOnce without a
  // TTY), whose output then runs on until it exits
  const outputEnds = how === "eof" && !(c.Config.StdinOnce && !c.Config.Tty);
  if (how === "detach" || outputEnds) gone.abort();
}

/** Input for a container that does not run yet: kept (bounded) until its attach socket can be reached. */
class EarlyInput implements InputSink {
  private input?: AttachInput;
  private kept: Buffer[] = [];
  private keptBytes = 0;
  private closed = false;
  private waiting: (() => void)[] = [];

  connect(input: AttachInput): void {
    this.input = input;
    for (const data of this.kept.splice(0)) input.write(data);
    if (this.closed) input.close();
    for (const wake of this.waiting.splice(0)) wake();
  }

  write(data: Buffer): boolean {
    if (this.input) return this.input.write(data);
    if (this.closed) return true;
    this.kept.push(data);
    this.keptBytes += data.length;
    return this.keptBytes < INPUT_BUFFER_BYTES;
  }

  async ready(): Promise<void> {
    if (!this.input && !this.closed) await new Promise<void>((resolve) => this.waiting.push(resolve));
    await this.input?.ready();
  }

  close(): void {
    this.closed = true;
    this.input?.close();
    for (const wake of this.waiting.splice(0)) wake();
  }
}

/** An attach ends when the container's run ends: the next exit for a container not started yet. */
function attachDone(service: ContainerService, c: ContainerRecord, signal: AbortSignal): Promise<unknown> {
  return c.State.Running ? service.stopped(c, signal) : service.wait(c, "next-exit", signal).catch(() => {});
}

async function readerOf(deps: ContainerRunDeps, c: ContainerRecord) {
  const settings = logSettings(c.HostConfig, deps.config());
  const driver = await deps.logDrivers(settings.driver, settings.chosenBy);
  if (!driver.createReader) throw errors.containerLogsUnreadable();
  return driver.createReader(loggerContext(c, deps.containers.dir(c.Id), settings.options));
}

/**
 * What an attachment reads. Its live output is conmon's spool, whatever the log driver, as
 * Docker's attach copies the container's streams: the bytes as the process wrote them (a log
 * driver may not keep them so: json-file stores text, and Docker's gives bytes that are no
 * UTF-8 back as U+FFFD). `replay` (`logs=1`) gives what the driver stores first (nothing with
 * a driver that cannot read, `none`).
 */
async function attachReaderOf(deps: ContainerRunDeps, c: ContainerRecord, replay: boolean): Promise<SpoolReader> {
  const settings = logSettings(c.HostConfig, deps.config());
  const driver = await deps.logDrivers(settings.driver, settings.chosenBy);
  // made now: whether the container runs at the attach decides where the live output begins
  const live = spoolReader(deps.service, c);
  // (a driver that cannot read now, dual logging without its cache, is refused a replay only, as Docker's attach)
  if (!driver.createReader || !replay) return live;
  const stored = driver.createReader(loggerContext(c, deps.containers.dir(c.Id), settings.options));
  return {
    positioned: live.positioned,
    async *read(opts: ReadOptions): AsyncGenerator<LogMessage> {
      if (opts.tail !== 0) yield* stored.read({ ...opts, follow: false });
      if (opts.follow && !opts.signal?.aborted) yield* live.read({ ...opts, tail: 0 });
    },
  };
}

/**
 * Writes each message as Docker does: a frame per line without a TTY, raw bytes with one. The
 * next message is read only once the client has room for it; the client's going away ends it.
 */
/**
 * Each message as Docker writes it: its time (`timestamps`), its attributes (`details`: the
 * log options' labels and env, `k=v` query-escaped, sorted by key, comma-joined, then a space
 * even when there are none), the line.
 */
async function sendMessages(messages: AsyncIterable<LogMessage>, client: ClientStream, opts: { tty: boolean; timestamps: boolean; details: boolean }): Promise<void> {
  for await (const m of messages) {
    const prefix = `${opts.timestamps ? `${formatRFC3339NanoFixed(m.timeNs)} ` : ""}${opts.details ? `${detailsOf(m.attrs)} ` : ""}`;
    const text = prefix ? Buffer.concat([Buffer.from(prefix), m.line]) : m.line;
    const data = m.partial ? text : Buffer.concat([text, NEWLINE]);
    if (!(await client.write(opts.tty ? data : frame(m.stream, data)))) break;
  }
}

const NEWLINE = Buffer.from("\n");
const NO_DETACH_KEYS = Buffer.alloc(0);

/** Attach's output goes a read of the container's pipe at a time, as Docker's (logs go a line at a time). */
async function* byReads(messages: AsyncIterable<LogMessage>): AsyncGenerator<LogMessage> {
  for await (const read of outputReads(messages, (a, b) => a.timeNs === b.timeNs && a.stream === b.stream)) {
    if (read.length === 1) yield read[0];
    else yield { ...read[0], line: Buffer.concat(read.flatMap((m) => (m.partial ? [m.line] : [m.line, NEWLINE]))), partial: true };
  }
}

/** Go's url.QueryEscape: a space as `+`, everything but letters, digits and `-_.~` as %XX. */
const queryEscape = (s: string) => encodeURIComponent(s).replace(/%20/g, "+").replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);

function detailsOf(attrs: Record<string, string> | undefined): string {
  return Object.keys(attrs ?? {})
    .sort()
    .map((k) => `${queryEscape(k)}=${queryEscape(attrs![k])}`)
    .join(",");
}

/** `since`/`until`: Unix seconds with an optional fraction (what the CLI sends), or an RFC 3339 time. */
function timeQuery(query: Query, name: string): { date: Date; ns?: bigint } | undefined {
  const raw = queryString(query, name);
  if (raw === undefined || raw === "" || raw === "0") return undefined;
  const unix = /^(\d+)(?:\.(\d+))?$/.exec(raw);
  if (unix) {
    // Docker's seconds.nanoseconds (the CLI sends --since/--until so), kept to the nanosecond
    const ns = BigInt(unix[1]) * 1_000_000_000n + BigInt((unix[2] ?? "").slice(0, 9).padEnd(9, "0"));
    return { date: new Date(Number(ns / 1_000_000n)), ns };
  }
  const ms = Date.parse(raw);
  if (Number.isNaN(ms)) throw errors.apiInvalidParameter(name, raw);
  return { date: new Date(ms) };
}

/** `tail`: a number Go's strconv.Atoi reads; anything else (`all`, `x`) is every line, as Docker's daemon takes it. */
function tailQuery(query: Query): number | undefined {
  const raw = queryString(query, "tail");
  if (raw === undefined || !/^[+-]?\d+$/.test(raw)) return undefined;
  const n = Number(raw);
  return n < 0 || !Number.isSafeInteger(n) ? undefined : n;
}
