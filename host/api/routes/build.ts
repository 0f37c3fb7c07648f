/**
 * `POST /build`: the context (a tar in the body, or `remote`) and the Dockerfile are read and
 * parsed first, so that a bad context, a missing Dockerfile, a Dockerfile that does not parse or
 * a target it does not have is a plain 400; then the answer is Docker's stream of JSON lines
 * (host/build/build-output.ts) while host/build/build-service.ts builds.
 */
import type { FastifyInstance } from "fastify";
import type { BuildInputs } from "../../build/build-input.js";
import { BuildOutput } from "../../build/build-output.js";
import type { BuildService } from "../../build/build-service.js";
import { selectStages } from "../../../core/build/dockerfile-parse.js";
import { buildOptionsFrom } from "../build-query.js";
import { progressStream } from "../progress-stream.js";
import type { Query } from "../query.js";

export interface BuildRouteDeps {
  service: BuildService;
  inputs: BuildInputs;
}

export function buildRoutes(deps: BuildRouteDeps) {
  return (app: FastifyInstance) => {
    app.post("/build", async (request, reply) => {
      const opts = buildOptionsFrom(request.query as Query, request.headers);
      const abort = new AbortController();
      // The client went away: the answer closing before it finished, or the client's end of the
      // connection shutting while a step prints nothing (the listeners keep half-open sockets
      // for attach, so a FIN alone closes nothing; a build's client never half-closes). The
      // request's own close comes as soon as its body is read: not a sign.
      const gone = () => {
        if (!reply.raw.writableFinished) abort.abort();
      };
      reply.raw.once("close", gone);
      request.raw.socket.once("end", gone);
      const input = await deps.inputs.open(request.raw, opts, abort.signal);
      let out: BuildOutput | undefined;
      try {
        selectStages(input.dockerfile, opts.target); // its 400 before the stream
      } catch (err) {
        await input.cleanup();
        throw err;
      }
      return progressStream(
        reply,
        async (w) => {
          w.begin();
          out = new BuildOutput(w.emit, opts.quiet);
          const signal = AbortSignal.any([w.signal, abort.signal]);
          try {
            out.parserWarnings(input.warnings);
            await deps.service.build(input.dockerfile, input.contextRoot, opts, out, signal);
          } finally {
            await input.cleanup();
          }
        },
        () => out?.failed(),
      );
    });
  };
}
