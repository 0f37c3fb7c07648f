/**
 * Fixtures of the plugin loader's tests (test/plugin-loader*.test.ts): every test gets a sandbox
 * folder with a `builtin/` folder of its own, and writes plain ESM plugin modules into it. Apply
 * order is recorded in globalThis.__order (and a plugin may leave its context in __ctx). Also: the
 * loader's dependencies with a logger that keeps its lines, selections, and the authorization
 * hook asked as the daemon asks it. `removeSandboxes` removes every sandbox made so far.
 */
import { expect } from "chai";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pino } from "pino";
import type { AuthzDenial, AuthzRequest } from "../../core/contracts/authz.js";
import type { HostFacts } from "../../core/contracts/plugin.js";
import { EngineError } from "../../core/errors.js";
import { createHooks, type EngineHooks } from "../../core/hooks.js";
import type { LoaderDeps, PluginSelection } from "../../host/plugins/plugin-loader.js";
import { makeTempDir } from "./engined.js";

type TestGlobal = typeof globalThis & { __order?: string[]; __ctx?: Record<string, unknown> };
export const g = globalThis as TestGlobal;

export const HOST: HostFacts = { platform: "linux", arch: "x64", kernel: "6", cgroupVersion: 1 };
export const temps: string[] = [];

export interface Sandbox {
  root: string;
  builtin: string;
}

export function sandbox(): Sandbox {
  const root = makeTempDir("engine-plugin-test-");
  temps.push(root);
  const builtin = join(root, "builtin");
  mkdirSync(builtin);
  return { root, builtin };
}

export function write(file: string, text: string): string {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

export interface FixtureSpec {
  id: string;
  /** Defaults to the id's kind part. */
  kind?: string;
  requires?: string[];
  /** Body of `supported(host)`. */
  supported?: string;
  /** Extra statements in `apply(hooks, ctx)`, after the order is recorded. */
  apply?: string;
}

/** The source of a plain ESM plugin module. */
export function pluginSource(spec: FixtureSpec): string {
  const manifest = { id: spec.id, kind: spec.kind ?? spec.id.split(".")[0], ...(spec.requires ? { requires: spec.requires } : {}) };
  return [
    "export default {",
    `  manifest: ${JSON.stringify(manifest)},`,
    spec.supported ? `  supported(host) { ${spec.supported} },` : "",
    "  apply(hooks, ctx) {",
    `    (globalThis.__order ??= []).push(${JSON.stringify(spec.id)});`,
    `    ${spec.apply ?? ""}`,
    "  },",
    "};",
    "",
  ].join("\n");
}

/** Writes `<builtinDir>/<kind>-<name>/index.js`. */
export function builtin(sb: Sandbox, folder: string, spec: FixtureSpec | string): string {
  return write(join(sb.builtin, folder, "index.js"), typeof spec === "string" ? spec : pluginSource(spec));
}

export interface LogLine {
  level: string;
  msg: string;
  [field: string]: unknown;
}

function memoryLogger() {
  const lines: LogLine[] = [];
  const log = pino(
    { level: "debug", base: undefined, formatters: { level: (label) => ({ level: label }) } },
    { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
  );
  return { log, lines };
}

export function depsFor(sb: Sandbox, searchFrom: string[] = [sb.root]) {
  const { log, lines } = memoryLogger();
  const hooks = createHooks();
  const deps: LoaderDeps = {
    hooks,
    log,
    host: HOST,
    dataRoot: join(sb.root, "data"),
    execRoot: join(sb.root, "exec"),
    resolve: { builtinDir: sb.builtin, searchFrom },
  };
  return { deps, hooks, lines };
}

export function authz(name: string, optional?: boolean): PluginSelection {
  return optional === undefined ? { kind: "authz", name } : { kind: "authz", name, optional };
}

/** The EngineError a promise rejects with; fails the test when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<EngineError> {
  let result: unknown;
  try {
    result = await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(EngineError);
    return err as EngineError;
  }
  throw new Error(`expected a rejection, got ${JSON.stringify(result)}`);
}

function authzRequest(method: string, uri: string): AuthzRequest {
  return { user: "", userAuthNMethod: "", method, uri, headers: {} };
}

export async function ask(hooks: EngineHooks, method: string, uri = "/v1.51/containers/create"): Promise<AuthzDenial | undefined> {
  return hooks.authorizeRequest.promise(authzRequest(method, uri));
}

/** A plugin that denies every request that is not GET, naming itself `name`. */
export const denyWrites = (name: string) =>
  `hooks.authorizeRequest.tap(${JSON.stringify(name)}, (req) => req.method === "GET" ? undefined : { plugin: ${JSON.stringify(name)}, message: "no " + req.method + " " + req.uri });`;

/** Removes every sandbox (and every folder a test added to `temps`). */
export function removeSandboxes(): void {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
}
