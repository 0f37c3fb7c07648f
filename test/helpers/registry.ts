/**
 * Starts a real registry: Debian's `docker-registry` (the CNCF distribution registry 2.8.2)
 * with its configuration written here, its storage and log in a temporary folder, on a free
 * port of 127.0.0.1. Three set-ups: no authentication, htpasswd (bcrypt, over TLS: the
 * registry serves basic authentication only over TLS), and token authentication against the
 * token server of registry-token-server.ts. Every registry started is ended by its pid in a
 * root `after` hook, even when a test fails before stopping it.
 */
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import { Agent, request } from "undici";
import { makeCerts, type CertSet } from "./certs.js";
import { makeTempDir } from "./engined.js";
import { startTokenServer, stopAllTokenServers, TOKEN_ISSUER, TOKEN_SERVICE, type TokenServer } from "./registry-token-server.js";

export type { TokenServer } from "./registry-token-server.js";

export const REGISTRY_BIN = "/usr/bin/docker-registry";
export const DEFAULT_USERS = [{ username: "tester", password: "s3cret-pass" }];

export interface TestRegistry {
  host: string;
  url: string;
  dir: string;
  certs?: CertSet;
  users: { username: string; password: string }[];
  token?: TokenServer;
  auth: "none" | "htpasswd" | "token";
  pid: number;
  /** Everything the registry logged so far (warn level and its access log). */
  log(): string;
  /** An undici dispatcher that trusts this registry's CA (a plain one without TLS); closed by stop(). */
  dispatcher: Agent;
  /** Path on disk of a blob's data file in the registry storage (for corrupting it in tests). */
  blobPath(digest: string): string;
  stop(): Promise<void>;
}

export interface RegistryOptions {
  auth?: "none" | "htpasswd" | "token";
  /** Default: true for htpasswd, false otherwise. */
  tls?: boolean;
  users?: { username: string; password: string }[];
  tokenLifetimeSeconds?: number;
  advertisedExpiresIn?: number;
  /** Token auth: anonymous requests get no token. */
  requireLogin?: boolean;
  certs?: CertSet;
  /**
   * The address to listen on (default 127.0.0.1): an address of an interface the test made,
   * for a registry that must not count as loopback. Only local addresses.
   */
  address?: string;
}

const running = new Set<TestRegistry>();

/** A port nobody listened on a moment ago (the registry retries on the rare conflict). */
export async function freePort(address = "127.0.0.1"): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve, reject) => {
    srv.once("error", reject);
    srv.listen(0, address, () => resolve());
  });
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function killByPid(proc: ChildProcess, graceMs: number): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null || proc.pid === undefined) return Promise.resolve();
  const pid = proc.pid;
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return Promise.resolve();
  }
  const timer = setTimeout(() => {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone already
    }
  }, graceMs);
  return exited.finally(() => clearTimeout(timer));
}

/** Plain YAML for the few shapes the config needs (nested maps of scalars). */
function yaml(value: unknown, indent = ""): string {
  return Object.entries(value as Record<string, unknown>).map(([k, v]) => {
    if (v !== null && typeof v === "object") return `${indent}${k}:\n${yaml(v, `${indent}  `)}`;
    return `${indent}${k}: ${JSON.stringify(v)}\n`;
  }).join("");
}

export async function startRegistry(opts: RegistryOptions = {}): Promise<TestRegistry> {
  const auth = opts.auth ?? "none";
  const address = opts.address ?? "127.0.0.1";
  const tls = opts.tls ?? auth === "htpasswd";
  const users = opts.users ?? DEFAULT_USERS;
  const dir = makeTempDir("engine-registry-");
  const storage = join(dir, "storage");
  mkdirSync(storage);
  const certs = tls ? (opts.certs ?? makeCerts(join(dir, "certs"))) : undefined;

  let token: TokenServer | undefined;
  const authConfig: Record<string, unknown> = {};
  if (auth === "htpasswd") {
    // bcrypt (-B) is the only hash the registry accepts.
    const lines = users.map((u) => execFileSync("htpasswd", ["-Bbn", u.username, u.password], { encoding: "utf8" }).trim());
    writeFileSync(join(dir, "htpasswd"), `${lines.join("\n")}\n`);
    authConfig.htpasswd = { realm: "test-realm", path: join(dir, "htpasswd") };
  } else if (auth === "token") {
    token = await startTokenServer({
      users,
      tokenLifetimeSeconds: opts.tokenLifetimeSeconds,
      advertisedExpiresIn: opts.advertisedExpiresIn,
      requireLogin: opts.requireLogin,
    });
    authConfig.token = { realm: `${token.url}/token`, service: TOKEN_SERVICE, issuer: TOKEN_ISSUER, rootcertbundle: token.certPath };
  }

  const logPath = join(dir, "registry.log");
  const dispatcher = new Agent(certs ? { connect: { ca: readFileSync(certs.ca) } } : {});
  // A free port can be taken between our probe and the registry's bind: retry, bounded.
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort(address);
    const config = {
      version: "0.1",
      log: { level: "warn", formatter: "text", fields: { service: "test-registry" } },
      storage: {
        filesystem: { rootdirectory: storage },
        delete: { enabled: true },
        // No background purge of uploads while tests run; no redirects (filesystem has none anyway).
        maintenance: { uploadpurging: { enabled: false } },
        redirect: { disable: true },
      },
      http: {
        addr: `${address.includes(":") ? `[${address}]` : address}:${port}`,
        // A fixed secret: without one the registry makes a random one and warns.
        secret: "engine-test-registry-secret",
        ...(certs ? { tls: { certificate: certs.serverCert, key: certs.serverKey } } : {}),
      },
      ...(auth === "none" ? {} : { auth: authConfig }),
    };
    const configPath = join(dir, "config.yml");
    writeFileSync(configPath, yaml(config));

    const fd = openSync(logPath, "a");
    const proc = spawn(REGISTRY_BIN, ["serve", configPath], { cwd: dir, stdio: ["ignore", fd, fd] });
    closeSync(fd);
    const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
    const log = () => {
      try {
        return readFileSync(logPath, "utf8");
      } catch {
        return "";
      }
    };
    const host = `${address.includes(":") ? `[${address}]` : address}:${port}`;
    const url = `${certs ? "https" : "http"}://${host}`;
    const reg: TestRegistry = {
      host,
      url,
      dir,
      certs,
      users,
      token,
      auth,
      pid: proc.pid ?? -1,
      log,
      dispatcher,
      blobPath(digest: string) {
        const hex = digest.replace(/^sha256:/, "");
        return join(storage, "docker/registry/v2/blobs/sha256", hex.slice(0, 2), hex, "data");
      },
      async stop() {
        running.delete(reg);
        await killByPid(proc, 3000);
        await token?.stop();
        await dispatcher.close().catch(() => {});
        rmSync(dir, { recursive: true, force: true });
      },
    };
    running.add(reg);

    // Ready when GET /v2/ answers at all (200 without auth, 401 with): at most ~10 s.
    let dead = false;
    exited.then(() => (dead = true));
    const until = Date.now() + 10_000;
    let ready = false;
    while (!dead && Date.now() < until) {
      try {
        const res = await request(`${url}/v2/`, { dispatcher, headersTimeout: 1000, bodyTimeout: 1000 });
        await res.body.dump();
        ready = res.statusCode === 200 || res.statusCode === 401;
        if (ready) break;
      } catch {
        // not listening yet
      }
      await sleep(50);
    }
    if (ready) return reg;
    const out = log();
    running.delete(reg);
    await killByPid(proc, 1000);
    if (/address already in use/.test(out) && attempt < 4) {
      writeFileSync(logPath, "");
      continue;
    }
    await token?.stop();
    await dispatcher.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`docker-registry did not start:\n${out}`);
  }
  throw new Error("docker-registry: no free port after 5 attempts");
}

/** Stops every registry and token server still running. */
export async function stopAllRegistries(): Promise<void> {
  await Promise.all([...running].map((r) => r.stop()));
  await stopAllTokenServers();
}

// A root hook when mocha loads this module (its `after` is global then): nothing outlives the run.
if (typeof globalThis.after === "function") {
  after(async () => {
    await stopAllRegistries();
  });
}
