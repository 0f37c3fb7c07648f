/**
 * Docker's exec endpoints: create, start (attached on a hijacked connection with the same
 * stream rules as attach, or detached), inspect and resize. The work is ExecSessions'
 * (host/containers/exec-sessions.ts).
 */
import type { Duplex } from "node:stream";
import type { FastifyInstance, FastifyRequest } from "fastify";
import typia from "typia";
import type { ContainerStore } from "../../../core/containers/container-store.js";
import { errors } from "../../../core/errors.js";
import { detachKeysOf } from "../../containers/detach-keys.js";
import { AttachInput } from "../../containers/attach-socket.js";
import { execInspect, type ExecCreateRequest, type ExecInstance, type ExecSessions } from "../../containers/exec-sessions.js";
import { followK8sLogBatches } from "../../containers/k8s-log-follow.js";
import { followedPipeReads } from "../../containers/k8s-log-reads.js";
import { ClientStream } from "../client-stream.js";
import { forwardInput, hijack } from "../hijack.js";
import type { Query } from "../query.js";
import { frame } from "../stream-frames.js";
import { outputReads } from "../output-reads.js";
import { bodyCheck, validateBody } from "../validate-body.js";
import { terminalSize } from "./container-run.js";
import { requestedApiVersion } from "../api-version.js";
import { compareApiVersions } from "../../../core/version.js";

interface ExecStartRequest {
  Detach?: boolean;
  Tty?: boolean;
  ConsoleSize?: [number, number] | null;
}

const validateCreate = bodyCheck(typia.createValidate<ExecCreateRequest>(), typia.json.schemas<[ExecCreateRequest], "3.1">());

const validateStart = bodyCheck(typia.createValidate<ExecStartRequest>(), typia.json.schemas<[ExecStartRequest], "3.1">());

export interface ExecRouteDeps {
  containers: ContainerStore;
  execs: ExecSessions;
}

export function execRoutes(deps: ExecRouteDeps) {
  const { containers, execs } = deps;
  const instance = (request: FastifyRequest) => execs.get((request.params as { id: string }).id);

  return (app: FastifyInstance) => {
    app.post("/containers/:id/exec", async (request, reply) => {
      const ref = (request.params as { id: string }).id;
      // Docker's order: the body (its type, its JSON) and its command, then the container
      const body = validateBody(validateCreate, request.body ?? {}, request);
      if ((body.Cmd ?? []).length === 0) throw errors.execNoCommand();
      if (!consoleSizeRead(request)) delete body.ConsoleSize;
      const c = containers.get(ref);
      detachKeysOf(body.DetachKeys, { for: "exec" }); // refused now rather than at start
      return reply.code(201).send({ Id: execs.create(c, body, ref).id });
    });

    app.post("/exec/:id/start", async (request, reply) => {
      // the body before the instance, as Docker's router reads them
      const body = validateBody(validateStart, request.body ?? {}, request);
      if (!consoleSizeRead(request)) delete body.ConsoleSize;
      const e = instance(request);
      if (body.Detach) {
        const started = await execs.start(e, { consoleSize: body.ConsoleSize });
        void started.exit.then(() => execs.release(e));
        return reply.code(200).send();
      }
      // As Docker's: the start's Tty says whether the output comes raw or in frames (a process
      // on a terminal has one stream, sent as stdout); the terminal itself is the create's Tty.
      const tty = body.Tty === true;
      // (a terminal's keys: piped input goes through byte for byte, as Docker copies it)
      const detachKeys = e.request.Tty === true ? detachKeysOf(e.request.DetachKeys) : Buffer.alloc(0);
      execs.checkStartable(e);
      // As Docker: the stream is taken first; a process that cannot start says why on it, and
      // the client reads the exit code (126) from the instance.
      const socket = hijack(request, reply, tty, { daemonHeaders: true });
      let started;
      try {
        started = await execs.start(e, { consoleSize: body.ConsoleSize });
      } catch (err) {
        const text = Buffer.from(`${(err as Error).message}\r\n`);
        socket.end(tty ? text : frame("stdout", text));
        socket.resume(); // the client's end is read (and what it sent dropped), so the socket closes
        return;
      }
      // The process's output is read on only as the client reads (it waits in the session's log
      // meanwhile); the client's going away or detaching ends the stream.
      const gone = new AbortController();
      const client = new ClientStream(socket, { until: gone.signal });
      if (e.request.AttachStdin) void execStdin(e, started.state.attachPath, socket, detachKeys, gone);
      else socket.resume();
      const wantOut = e.request.AttachStdout === true;
      // a raw stream (start Tty) carries stdout only, as Docker's: a process without a terminal loses its stderr there
      const wantErr = e.request.AttachStderr === true && !tty;
      try {
        const reads = followedPipeReads(followK8sLogBatches(started.state.logPath, started.exit, client.signal), (stream) => (stream === "stdout" ? wantOut : wantErr));
        // (a read the file gave in two pieces goes out whole)
        for await (const read of outputReads(reads, (a, b) => a.time === b.time && a.stream === b.stream)) {
          const data = read.length === 1 ? read[0].data : Buffer.concat(read.map((r) => r.data));
          if (!(await client.write(tty ? data : frame(read[0].stream, data)))) break;
        }
      } finally {
        client.end();
        void execs.release(e);
      }
    });

    app.get("/exec/:id/json", async (request) => execInspect(instance(request)));

    app.post("/exec/:id/resize", async (request, reply) => {
      // the size is read before the instance is looked for, as Docker's router does
      const { height, width } = terminalSize(request.query as Query);
      const e = instance(request);
      await execs.resize(e, height, width);
      return reply.code(200).send();
    });
  };
}

/** Whether an exec's `ConsoleSize` is read: from API 1.42, as Docker's routes read it (at create and at start). */
function consoleSizeRead(request: FastifyRequest): boolean {
  return compareApiVersions(requestedApiVersion(request.raw), "1.42") >= 0;
}

/** The client's input to the exec's stdin; its end closes the process's stdin (without a TTY), the detach keys end the stream. */
async function execStdin(e: ExecInstance, attachPath: string, socket: Duplex, detachKeys: Buffer, gone: AbortController): Promise<void> {
  const input = new AttachInput(attachPath);
  const how = await forwardInput(socket, input, detachKeys);
  input.close();
  if (how === "detach" || (how === "closed" && e.running)) gone.abort();
}
