/**
 * The API machinery every route shares, in-process: versions in paths, Docker's headers, the
 * `{"message"}` error shape and status mapping, body validation, the authorization hooks and
 * load shedding.
 */
import { expect } from "chai";
import typia from "typia";
import { errors } from "../core/errors.js";
import { bodyCheck, validateBody } from "../host/api/validate-body.js";
import { buildTestApi } from "./helpers/api.js";

interface CreateBody {
  Image: string;
  Cmd?: string[];
  HostConfig?: { Memory?: number };
}
const validateCreate = bodyCheck(typia.createValidate<CreateBody>(), typia.json.schemas<[CreateBody], "3.1">());

describe("API machinery", () => {
  describe("versions in paths", () => {
    it("serves every route at /vX.Y/ and unversioned", async () => {
      const { app } = await buildTestApi();
      for (const url of ["/_ping", "/v1.51/_ping", "/v1.24/_ping", "/v1.41/_ping"]) {
        const res = await app.inject({ method: "GET", url });
        expect(res.statusCode, url).to.equal(200);
        expect(res.body).to.equal("OK");
      }
      await app.close();
    });

    it("refuses versions below 1.24 and above 1.51 with Docker's wording, and the headers still set", async () => {
      const { app } = await buildTestApi();
      const old = await app.inject({ method: "GET", url: "/v1.12/version" });
      expect(old.statusCode).to.equal(400);
      expect(old.headers["content-type"]).to.match(/^application\/json/);
      expect(old.json()).to.deep.equal({
        message: "client version 1.12 is too old. Minimum supported API version is 1.24, please upgrade your client to a newer version",
      });
      expect(old.headers["api-version"]).to.equal("1.51");
      const neu = await app.inject({ method: "GET", url: "/v1.99/version" });
      expect(neu.statusCode).to.equal(400);
      expect(neu.json()).to.deep.equal({ message: "client version 1.99 is too new. Maximum supported API version is 1.51" });
      // 1.9 is older than 1.24 (numeric, not string comparison); 1.100 is newer than 1.51.
      expect((await app.inject({ method: "GET", url: "/v1.9/_ping" })).statusCode).to.equal(400);
      expect((await app.inject({ method: "GET", url: "/v1.100/_ping" })).statusCode).to.equal(400);
      await app.close();
    });

    it("answers unknown routes 404 page not found, versioned or not", async () => {
      const { app } = await buildTestApi();
      for (const url of ["/nope", "/v1.51/nope", "/v1.51/containers/x/nothing"]) {
        const res = await app.inject({ method: "GET", url });
        expect(res.statusCode, url).to.equal(404);
        expect(res.json()).to.deep.equal({ message: "page not found" });
        expect(res.headers.ostype).to.equal("linux");
      }
      await app.close();
    });
  });

  describe("headers and /_ping", () => {
    it("sets Api-Version, Ostype and Server on every answer", async () => {
      const { app } = await buildTestApi();
      const res = await app.inject({ method: "GET", url: "/version" });
      expect(res.headers["api-version"]).to.equal("1.51");
      expect(res.headers.ostype).to.equal("linux");
      expect(String(res.headers.server)).to.match(/^Engine\/\d+\.\d+\.\d+ \(linux\)$/);
      await app.close();
    });

    it("answers GET and HEAD /_ping with Docker's no-cache headers", async () => {
      const { app } = await buildTestApi();
      const get = await app.inject({ method: "GET", url: "/_ping" });
      expect(get.headers["content-type"]).to.equal("text/plain; charset=utf-8");
      expect(get.headers["cache-control"]).to.equal("no-cache, no-store, must-revalidate");
      expect(get.headers.pragma).to.equal("no-cache");
      const head = await app.inject({ method: "HEAD", url: "/_ping" });
      expect(head.statusCode).to.equal(200);
      expect(head.body).to.equal("");
      expect(head.headers["content-length"]).to.equal("0");
      await app.close();
    });
  });

  describe("request bodies", () => {
    const routes = [
      (app: import("fastify").FastifyInstance) =>
        app.post("/test/create", async (request, reply) => {
          const body = validateBody(validateCreate, request.body);
          return reply.code(201).send({ Image: body.Image });
        }),
    ];

    it("passes a body that fits the type", async () => {
      const { app } = await buildTestApi({ routes });
      const res = await app.inject({ method: "POST", url: "/v1.51/test/create", payload: { Image: "busybox", Cmd: ["true"] } });
      expect(res.statusCode).to.equal(201);
      expect(res.json()).to.deep.equal({ Image: "busybox" });
      await app.close();
    });

    it("answers 400 naming every wrong field", async () => {
      const { app } = await buildTestApi({ routes });
      const res = await app.inject({
        method: "POST",
        url: "/test/create",
        payload: { Image: 3, Cmd: "true", HostConfig: { Memory: "1g" } },
      });
      expect(res.statusCode).to.equal(400);
      const { message } = res.json() as { message: string };
      expect(message).to.include("field Image: expected string, got number 3");
      expect(message).to.include("field Cmd: expected");
      expect(message).to.include("field HostConfig.Memory: expected");
      await app.close();
    });

    it("answers 400 for a missing body and for broken JSON", async () => {
      const { app } = await buildTestApi({ routes });
      const empty = await app.inject({ method: "POST", url: "/test/create", headers: { "content-type": "application/json" }, payload: "" });
      expect(empty.statusCode).to.equal(400);
      expect(empty.json().message).to.include("body: expected CreateBody");
      const broken = await app.inject({ method: "POST", url: "/test/create", headers: { "content-type": "application/json" }, payload: "{nope" });
      expect(broken.statusCode).to.equal(400);
      expect(broken.json().message).to.match(/^invalid JSON: /);
      await app.close();
    });
  });

  describe("errors", () => {
    it("maps catalogue errors to their status and unknown throws to 500, always as {message}", async () => {
      const { app } = await buildTestApi({
        routes: [
          (a) => a.get("/test/conflict", async () => {
            throw errors.listenerAddressInUse("x");
          }),
          (a) => a.get("/test/boom", async () => {
            throw new Error("something broke");
          }),
        ],
      });
      const conflict = await app.inject({ method: "GET", url: "/test/conflict" });
      expect(conflict.statusCode).to.equal(500);
      expect(conflict.json()).to.deep.equal({ message: "x is already in use by another process (is another daemon listening there?)" });
      const boom = await app.inject({ method: "GET", url: "/test/boom" });
      expect(boom.statusCode).to.equal(500);
      expect(boom.json()).to.deep.equal({ message: "something broke" });
      await app.close();
    });
  });

  describe("authorization hooks", () => {
    it("asks the request hook on every request, credentials removed, and lets a denial answer 403", async () => {
      const { app, hooks } = await buildTestApi();
      const seen: { method: string; uri: string; headers: Record<string, string>; body?: string }[] = [];
      hooks.authorizeRequest.tap("test", (req) => {
        seen.push({ method: req.method, uri: req.uri, headers: req.headers, body: req.body?.toString() });
        return req.uri.includes("secret") ? { plugin: "test", message: "no secrets" } : undefined;
      });
      expect((await app.inject({ method: "GET", url: "/v1.51/_ping" })).statusCode).to.equal(200);
      const denied = await app.inject({
        method: "POST",
        url: "/v1.51/secret",
        headers: { authorization: "Bearer x", "x-registry-auth": "abc", "x-other": "kept" },
        payload: { a: 1 },
      });
      expect(denied.statusCode).to.equal(403);
      expect(denied.json()).to.deep.equal({ message: "authorization denied by plugin test: no secrets" });
      expect(seen.map((s) => `${s.method} ${s.uri}`)).to.deep.equal(["GET /v1.51/_ping", "POST /v1.51/secret"]);
      expect(seen[1].headers).to.not.have.property("authorization");
      expect(seen[1].headers).to.not.have.property("x-registry-auth");
      expect(seen[1].headers["x-other"]).to.equal("kept");
      expect(seen[1].body).to.equal('{"a":1}');
      await app.close();
    });

    it("lets the response hook see the answer and replace it with a 403", async () => {
      const { app, hooks } = await buildTestApi();
      hooks.authorizeResponse.tap("test", (res) =>
        res.request.uri.endsWith("/version") && res.body?.toString().includes('"Version"')
          ? { plugin: "test", message: "versions are private" }
          : undefined,
      );
      const res = await app.inject({ method: "GET", url: "/v1.51/version" });
      expect(res.statusCode).to.equal(403);
      expect(res.json()).to.deep.equal({ message: "authorization denied by plugin test: versions are private" });
      expect((await app.inject({ method: "GET", url: "/_ping" })).statusCode).to.equal(200);
      await app.close();
    });
  });

  describe("load shedding", () => {
    it("answers 503 with Retry-After while the event loop is saturated", async () => {
      const { app } = await buildTestApi({ load: { maxEventLoopDelay: 50, retryAfter: 7, sampleInterval: 10 } });
      // Block the event loop well past the limit; the request comes right after the timer that
      // measures the lateness has fired (timers run before setImmediate's callbacks).
      const until = Date.now() + 300;
      while (Date.now() < until) {
        // busy: this is the saturation under test
      }
      await new Promise((r) => setImmediate(r));
      const res = await app.inject({ method: "GET", url: "/_ping" });
      expect(res.statusCode).to.equal(503);
      expect(res.headers["retry-after"]).to.equal("7");
      expect(res.json().message, res.body).to.match(/^the daemon is overloaded: its event loop runs \d+ ms late \(the limit is 50 ms\); try again later$/);
      // on time again at the next measure: served
      await new Promise((r) => setTimeout(r, 30));
      expect((await app.inject({ method: "GET", url: "/_ping" })).statusCode).to.equal(200);
      await app.close();
    });
  });
});
