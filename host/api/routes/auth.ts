/**
 * `POST /auth`: a login. The credentials are checked against the registry the way a pull
 * would use them (the bearer token or basic challenge of its `/v2/`), and nothing is stored:
 * the client keeps them. An identity token (a refresh token) is returned when the registry's
 * token server issued one, for the client to send instead of the password from then on.
 */
import type { FastifyInstance } from "fastify";
import { errors } from "../../../core/errors.js";
import { DEFAULT_DOMAIN } from "../../../core/images/reference.js";
import { credentialsOf } from "../../registry/auth-header.js";
import type { RegistryService } from "../../registry/registry.js";

/** `https://index.docker.io/v1/`, `127.0.0.1:5000`, `http://host:5000/` -> the registry's domain. */
export function loginDomain(serveraddress: string | undefined): string {
  if (!serveraddress) return DEFAULT_DOMAIN;
  const host = serveraddress.replace(/^[a-z]+:\/\//i, "").replace(/\/.*$/, "");
  if (/^(index\.|registry-1\.)?docker\.io$/.test(host)) return DEFAULT_DOMAIN;
  return host;
}

export function authRoutes(deps: { registry: RegistryService }) {
  return (app: FastifyInstance) => {
    app.post("/auth", async (request) => {
      const body = request.body;
      if (!body || typeof body !== "object") throw errors.apiInvalidBody("a JSON body with username, password and serveraddress is required");
      const creds = credentialsOf(body) ?? {};
      const domain = loginDomain(creds.serveraddress);
      const { value } = await deps.registry.open(domain, "", "login", creds, undefined, (session) => session.login());
      return { Status: "Login Succeeded", IdentityToken: value.identityToken ?? "" };
    });
  };
}
