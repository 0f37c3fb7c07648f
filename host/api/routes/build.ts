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
import { requestedApiVersion } from "../api-version.js";
import { compareApiVersions } from "../../../core/version.js";

export interface BuildRouteDeps {
  service: BuildService;
  inputs: BuildInputs;
}

export function buildRoutes(deps: BuildRouteDeps) {
  return (app: FastifyInstance) => {
    app.post("/build", async (request, reply) => {
      const version = requestedApiVersion(request.raw);
      const opts = buildOptionsFrom(request.query as Query, request.headers, version);
      // an image's `aux` line (its ID) goes to clients of API 1.30 and later, as Docker's route sends it
      const aux = compareApiVersions(version, "1.30") >= 0;
      const abort = new AbortController();
      // the answer closing before it finished: the client went away (the request's own close
      // comes as soon as its body is read). So does the client's FIN: this server keeps a
      // half-closed connection open (for attach, listeners/listen.ts), where Docker's cancels
      // the build as soon as it reads the end of the connection; a build that prints nothing
      // for a while (a long RUN) would otherwise go on to its end for nobody
      const socket = request.raw.socket;
      const gone = () => {
        if (!reply.raw.writableFinished) abort.abort();
      };
      socket.once("end", gone);
      reply.raw.once("close", () => {
        socket.off("end", gone);
        gone();
      });
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
          out = new BuildOutput(aux ? w.emit : (m) => void (m.aux === undefined && w.emit(m)), opts.quiet, w.ready);
          const signal = AbortSignal.any([w.signal, abort.signal]);
          try {
            out.parserWarnings(input.warnings);
            await deps.service.build(input.dockerfile, input.contextRoot, opts, out, signal);
          } finally {
            // removed once the answer is out: deleting a big context's files is no part of the
            // build the client waits for (and a daemon stopped meanwhile empties <tmp>/build at
            // its next start)
            void input.cleanup().catch(() => undefined);
          }
        },
        () => out?.failed(),
      );
    });
  };
}
