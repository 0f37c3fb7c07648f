/**
 * The API server: a Fastify instance that speaks the Docker Engine API. It owns what every
 * route shares (versions in paths, the Docker response headers, JSON bodies, the error shape
 * `{"message": ...}`, authorization, load shedding) and hands the routes the engine's parts.
 * It never listens itself: the listeners (`host/listeners/`) feed `handler` from each socket.
 */
import type { RequestListener } from "node:http";
import { http } from "../../core/node-http.js";
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply } from "fastify";
import type { Logger } from "pino";
import { EngineError, errors, toEngineError } from "../../core/errors.js";
import type { EngineHooks } from "../../core/hooks.js";
import { API_VERSION, ENGINE_VERSION } from "../../core/version.js";
import { checkApiVersion, rewriteVersionedUrl } from "./api-version.js";
import { installAuthorization } from "./authorization.js";
import { readGoJson } from "./go-json-syntax.js";
import { canonicalWriteHead } from "./header-names.js";
import { DEFAULT_LOAD_LIMITS, installLoadShedding, type LoadLimits } from "./load-shedding.js";
import { systemRoutes, type SystemRouteDeps } from "./routes/system.js";

export interface ApiDeps extends SystemRouteDeps {
  hooks: EngineHooks;
  log: Logger;
  load?: LoadLimits;
  /** Whether experimental features are on: every answer says so in `Docker-Experimental`, as Docker's daemon does. */
  experimental?: () => boolean;
  /** The routes of each area (images, containers, networks...; tests add their own), registered after the shared machinery. */
  routes?: ((app: FastifyInstance) => void)[];
}

export interface Api {
  app: FastifyInstance;
  /** The request handler to serve on every listener. */
  handler: RequestListener;
  /** Every route served, as `METHOD /pattern` (`POST /containers/:id/start`), in registration order. */
  routes: readonly string[];
  /** Settles when the first request served is answered (its response closed). */
  firstAnswer: Promise<void>;
}

/** JSON bodies are limited to this; streams (image loads) bypass the JSON parser. */
const JSON_BODY_LIMIT = 32 * 1024 * 1024;
const SERVER_HEADER = `Engine/${ENGINE_VERSION} (linux)`;

export async function buildApi(deps: ApiDeps): Promise<Api> {
  let handler: RequestListener | undefined;
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    // Requests are not logged one by one (the daemon's log is for operators); errors are.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: JSON_BODY_LIMIT,
    rewriteUrl: rewriteVersionedUrl,
    // Docker clients send `//containers/json` and trailing slashes now and then.
    // A parameter as long as the request line may be (Node's header limit bounds it): Fastify's
    // default of 100 answered 414 for a volume or network named longer, which Docker serves.
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 16 * 1024 },
    // Docker's router serves HEAD on two routes only, `/_ping` and a container's `archive`
    // (each declared with app.head); on every other GET route HEAD is a 404 there
    exposeHeadRoutes: false,
    // a path Fastify cannot decode (`%ff`) is refused before routing: in the API's shape too
    frameworkErrors: (err, _request, reply) => sendError(reply, fromFastifyError(err)),
    serverFactory: (h) => {
      handler = h;
      return http.createServer();
    },
    // No route declares a JSON schema (bodies are checked by typia's validators,
    // validate-body.ts), so Fastify's schema compilers would never run; named here, they are
    // never loaded either (ajv and fast-json-stringify: some 100 modules at every start).
    schemaController: { compilersFactory: { buildValidator: noRouteSchemas, buildSerializer: noRouteSchemas } },
  });

  const routes = collectRoutes(app);
  app.addHook("onRequest", async (request, reply) => {
    reply.header("Api-Version", API_VERSION).header("Ostype", "linux").header("Server", SERVER_HEADER);
    checkApiVersion(request.raw);
    // set past the version check, as Docker's innermost middleware: a refused version has none
    reply.header("Docker-Experimental", String(deps.experimental?.() ?? false));
    if (request.method !== "GET" && request.method !== "HEAD") request.log.debug({ method: request.method, url: request.url }, "API call");
  });

  reportAnswers(app, deps.hooks);
  installJsonParser(app);
  installJsonAnswers(app);
  installErrorShape(app, deps.log);
  installLoadShedding(app, deps.load ?? DEFAULT_LOAD_LIMITS);
  installAuthorization(app, deps.hooks);
  reportBadJson(app);
  app.register(systemRoutes(deps));
  for (const routes of deps.routes ?? []) app.register(async (scope) => routes(scope));
  await app.ready();
  // the route table at debug level: what a test (test/api-fuzz.test.ts) or an operator reads to
  // know every route this daemon serves, its plugins' included
  deps.log.debug({ routes }, "API routes");
  const serve = handler!;
  let first = true;
  let answered!: () => void;
  const firstAnswer = new Promise<void>((resolve) => (answered = resolve));
  const served: RequestListener = (req, res) => {
    if (first) {
      first = false;
      res.once("close", answered);
    }
    canonicalWriteHead(res);
    serve(req, res);
  };
  return { app, handler: served, routes, firstAnswer };
}

/** Every route as it is added (the HEAD routes Fastify adds for GET ones included). */
/** Fastify's schema compilers, for a route that declares a schema: none does, and none may. */
function noRouteSchemas(): never {
  throw new Error("routes declare no JSON schema here: a body is checked with typia (host/api/validate-body.ts)");
}

function collectRoutes(app: FastifyInstance): string[] {
  const routes: string[] = [];
  app.addHook("onRoute", (route) => {
    for (const method of [route.method].flat()) routes.push(`${method} ${route.url}`);
  });
  return routes;
}

/**
 * `hooks.answeredRequest`: each request's route pattern, status and duration, told when its
 * response closes: after the last byte, or when a stream the client took over (attach, exec)
 * ends, which Fastify's own onResponse never sees. Nothing is measured while no tap listens.
 */
function reportAnswers(app: FastifyInstance, hooks: EngineHooks): void {
  app.addHook("onRequest", async (request, reply) => {
    // (taps, not isUsed(): the daemon guards every notification with an interceptor)
    if (hooks.answeredRequest.taps.length === 0) return;
    const began = process.hrtime.bigint();
    reply.raw.once("close", () => {
      hooks.answeredRequest.call({
        method: request.method,
        route: request.routeOptions.url ?? "unmatched",
        statusCode: reply.raw.statusCode,
        seconds: Number(process.hrtime.bigint() - began) / 1e9,
      });
    });
  });
}

/**
 * Docker's clients send JSON, sometimes with an empty body under `application/json`, and
 * sometimes bodies with no or another type on endpoints that ignore them. Empty JSON is no
 * body; the raw bytes are kept for authorization plugins; other types are left unread for the
 * routes that stream them. Malformed JSON is reported after the authorization check (see
 * `reportBadJson`), so that plugins are asked about every request that carries a body.
 */
function installJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser(["application/json", "text/plain"]);
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body, done) => {
    const buf = body as Buffer;
    request.rawJsonBody = buf;
    if (buf.length === 0) return done(null, undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(buf.toString("utf8"));
    } catch {
      // what Go's decoder makes of it: Docker's words, or a first value it takes whole
      const read = readGoJson(buf);
      if ("error" in read) request.badJson = errors.apiInvalidJson(read.error);
      else parsed = JSON.parse(buf.subarray(0, read.end).toString("utf8"));
    }
    done(null, parsed);
  });
  app.addContentTypeParser("*", (_request, _payload, done) => done(null, undefined));
}

/** Registered after the authorization check: a body that is not JSON fails before any handler. */
function reportBadJson(app: FastifyInstance): void {
  app.addHook("preHandler", async (request) => {
    if (request.badJson) throw request.badJson;
  });
}

/**
 * A JSON answer as Docker's daemon writes one (Go's json.Encoder): the document and a newline,
 * under exactly `application/json` (Fastify's own would say `; charset=utf-8` and end at the
 * brace). Answers with a type of their own (streams, tars, text) are left as they are.
 */
function installJsonAnswers(app: FastifyInstance): void {
  app.setReplySerializer((payload) => `${JSON.stringify(payload)}\n`);
  app.addHook("onSend", async (_request, reply, payload) => {
    if (reply.getHeader("content-type") === "application/json; charset=utf-8") reply.header("content-type", "application/json");
    return payload;
  });
}

/** Every error answer is `{"message": "..."}` with the catalogue's status. */
function installErrorShape(app: FastifyInstance, log: Logger): void {
  app.setErrorHandler((err: FastifyError | EngineError, request, reply) => {
    const engineErr = fromFastifyError(err);
    if (engineErr.statusCode >= 500 && engineErr.statusCode !== 503) {
      log.error({ err, method: request.method, url: request.url }, "API request failed");
    }
    sendError(reply, engineErr);
  });
  app.setNotFoundHandler((_request, reply) => sendError(reply, errors.apiPageNotFound()));
}

/**
 * Exactly `application/json`, as bytes: the Docker CLI reads the message out of an error only
 * under that exact type (with `; charset=utf-8` it prints the raw JSON).
 */
function sendError(reply: FastifyReply, err: EngineError): void {
  reply.code(err.statusCode).header("content-type", "application/json").send(Buffer.from(`${JSON.stringify({ message: err.message })}\n`));
}

function fromFastifyError(err: FastifyError | EngineError): EngineError {
  if (err instanceof EngineError) return err;
  switch (err.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return errors.apiBodyTooLarge(JSON_BODY_LIMIT);
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return errors.apiUnsupportedMediaType(String(err.message));
  }
  if (typeof err.statusCode === "number" && err.statusCode >= 400 && err.statusCode < 500) {
    return new EngineError(err.code ?? "ENGINE_ERR_API_REQUEST", err.statusCode, err.message);
  }
  return toEngineError(err);
}
