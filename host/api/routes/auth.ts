/**
 * `POST /auth`: a login. The credentials are checked against the registry the way a pull
 * would use them (the bearer token or basic challenge of its `/v2/`), and nothing is stored:
 * the client keeps them. An identity token (a refresh token) is returned when the registry's
 * token server issued one, for the client to send instead of the password from then on.
 */
import type { FastifyInstance } from "fastify";
import typia from "typia";
import { errors } from "../../../core/errors.js";
import { DEFAULT_DOMAIN, isRegistryDomain } from "../../../core/images/reference.js";
import { credentialsOf } from "../../registry/auth-header.js";
import type { RegistryService } from "../../registry/registry.js";
import { bodyCheck, validateBody } from "../validate-body.js";

/**
 * The body: Docker's AuthConfig. Go reads its keys in any case; the two spellings clients send
 * are checked, so that a field of the wrong type is a 400, not a login without it (which would
 * go to Docker Hub).
 */
interface AuthRequest {
  username?: string;
  Username?: string;
  password?: string;
  Password?: string;
  auth?: string;
  Auth?: string;
  email?: string;
  Email?: string;
  serveraddress?: string;
  ServerAddress?: string;
  identitytoken?: string;
  IdentityToken?: string;
  registrytoken?: string;
  RegistryToken?: string;
}

const validateAuth = bodyCheck(typia.createValidate<AuthRequest>(), typia.json.schemas<[AuthRequest], "3.1">());

/**
 * `https://index.docker.io/v1/`, `127.0.0.1:5000`, `http://host:5000/` -> the registry's domain;
 * none (or a scheme alone, as Docker reads it) is Docker Hub's. One that names no host is a 400.
 */
function loginDomain(serveraddress: string | undefined): string {
  if (!serveraddress) return DEFAULT_DOMAIN;
  const host = serveraddress.replace(/^[a-z]+:\/\//i, "").replace(/\/.*$/, "");
  if (host === "" && serveraddress !== host) return DEFAULT_DOMAIN;
  if (/^(index\.|registry-1\.)?docker\.io$/.test(host)) return DEFAULT_DOMAIN;
  if (!isRegistryDomain(host)) throw errors.registryInvalidAddress(serveraddress);
  return host;
}

export function authRoutes(deps: { registry: RegistryService }) {
  return (app: FastifyInstance) => {
    app.post("/auth", async (request) => {
      const body = request.body;
      if (!body || typeof body !== "object") throw errors.apiInvalidBody("a JSON body with username, password and serveraddress is required");
      const checked = validateBody(validateAuth, body);
      const creds = credentialsOf(checked) ?? {};
      // the registry is the one named, with credentials or without
      const domain = loginDomain(checked.serveraddress || checked.ServerAddress);
      const { value } = await deps.registry.open(domain, "", "login", creds, undefined, (session) => session.login());
      return { Status: "Login Succeeded", IdentityToken: value.identityToken ?? "" };
    });
  };
}
