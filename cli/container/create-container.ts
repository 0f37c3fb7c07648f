/**
 * `POST /containers/create` as `run` and `create` do it, in the Docker CLI's order: the
 * `--cidfile` made (an existing one refused), `--use-api-socket`'s mount (api-socket.ts), `--platform` parsed
 * (sent as `platform=` from API 1.41), `--pull always` pulls first, and `--pull missing` pulls
 * an image the daemon does not have (its progress on stderr) and tries again. The daemon's
 * warnings, and the client's own about a loopback DNS server, go to stderr; the id then goes to
 * the cidfile, which is taken away again when the create fails.
 */
import type { CommandContext } from "../command.js";
import { DaemonError, type Connection } from "../connection.js";
import { CidFile } from "./cid-file.js";
import type { ContainerRequest, CreateBody } from "./container-config.js";
import { platformQuery } from "./platform.js";

/** A failure of the client's own before or around the create (a cidfile, a platform). */
export class CreateError extends Error {}

const atLeast = (version: string, min: string) => {
  const [a, b] = [version, min].map((v) => v.split(".").map(Number));
  return a[0] > b[0] || (a[0] === b[0] && a[1] >= b[1]);
};

function own<T>(make: () => T): T {
  try {
    return make();
  } catch (e) {
    throw new CreateError((e as Error).message);
  }
}

/**
 * The create body for the agreed API version, as the Docker client library adjusts it: what an
 * older daemon cannot take is refused (in its words), what it would misread is left out.
 */
function forApiVersion(req: ContainerRequest, version: string, platform: string | undefined): CreateBody {
  const body = { ...req.body, HostConfig: { ...req.body.HostConfig } };
  const needs = (min: string, what: string) => {
    if (!atLeast(version, min)) throw new CreateError(`"${what}" requires API version ${min}, but the Docker daemon API version is ${version}`);
  };
  if (body.StopTimeout !== undefined) needs("1.25", "stop timeout");
  if (body.Healthcheck?.StartInterval) needs("1.44", "specify health-check start interval");
  if (Object.values(body.NetworkingConfig.EndpointsConfig).some((e) => e.MacAddress)) needs("1.44", "specify mac-address per network");
  if (!atLeast(version, "1.25")) body.HostConfig.AutoRemove = false;
  // KernelMemory came with API 1.40 and went with 1.42: the Docker CLI sends it only between
  if (req.kernelMemory && atLeast(version, "1.40") && !atLeast(version, "1.42")) body.HostConfig.KernelMemory = req.kernelMemory;
  if (platform?.startsWith("linux") && !atLeast(version, "1.42")) body.HostConfig.ConsoleSize = [0, 0];
  return body;
}

/** The client's warning for a loopback `--dns` (the container's loopback is not the host's). */
function localhostDnsWarning(dns: readonly string[]): string | undefined {
  const loopback = dns.find((ip) => /^127\./.test(ip) || ip === "::1");
  return loopback === undefined ? undefined : `Localhost DNS (${loopback}) may fail in containers.`;
}

export async function createContainer(ctx: CommandContext, req: ContainerRequest): Promise<string> {
  const conn = ctx.connection();
  const cid = own(() => CidFile.open(req.cidFile));
  try {
    // loaded for --use-api-socket only: it brings tar-stream, a dozen modules every run would load
    const apiSocket = req.useApiSocket ? await (await import("./api-socket.js")).ApiSocket.prepare(ctx, req.body).catch((e: Error) => Promise.reject(new CreateError(e.message))) : undefined;
    const version = await conn.apiVersion();
    const platform = req.platform !== "" && atLeast(version, "1.41") ? own(() => platformQuery(req.platform)) : undefined;
    if (req.pull === "always") await pullImage(ctx, conn, req);
    const body = forApiVersion(req, version, platform);
    const create = () =>
      conn.json<{ Id: string; Warnings?: string[] | null }>("POST", "/containers/create", {
        query: { platform, name: req.name || undefined },
        json: body,
      });
    let created;
    try {
      created = await create();
    } catch (e) {
      // Only a missing image (or one of another platform) is pulled: a 404 for a missing network must not start a download.
      if (!(e instanceof DaemonError) || e.status !== 404 || req.pull !== "missing" || !/^No such image|does not match the specified platform/i.test(e.daemonMessage)) throw e;
      const { familiarString, parseNormalizedNamed } = await import("../reference.js");
      const ref = parseNormalizedNamed(req.image);
      if (ref.tag === undefined && ref.digest === undefined) ref.tag = "latest";
      if (!req.quiet) ctx.stderr(`Unable to find image '${familiarString(ref)}' locally\n`);
      await pullImage(ctx, conn, req);
      created = await create();
    }
    const dnsWarning = localhostDnsWarning(body.HostConfig.Dns as string[]);
    for (const w of [...(created.Warnings ?? []), ...(dnsWarning ? [dnsWarning] : [])]) ctx.stderr(`WARNING: ${w}\n`);
    cid.write(created.Id);
    if (apiSocket) await apiSocket.inject(conn, created.Id).catch((e: Error) => Promise.reject(new CreateError(e.message)));
    return created.Id;
  } finally {
    cid.close();
  }
}

async function pullImage(ctx: CommandContext, conn: Connection, req: ContainerRequest): Promise<void> {
  const { parseNormalizedNamed, repositoryName } = await import("../reference.js");
  const { registryAuthFor } = await import("../auth/registry-auth.js");
  const ref = parseNormalizedNamed(req.image);
  const res = await conn.call("POST", "/images/create", {
    query: { fromImage: repositoryName(ref), tag: ref.digest ?? ref.tag ?? "latest", platform: req.platform ? req.platform.toLowerCase() : undefined },
    headers: { "X-Registry-Auth": registryAuthFor(ctx.configDir, ref, ctx.stderr) },
  });
  const out = req.quiet ? { stdout: () => undefined, isTTY: false } : { stdout: ctx.stderr, isTTY: Boolean(process.stderr.isTTY) };
  try {
    await (await import("../progress/show-progress.js")).showProgress(res.body, out);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code || (e as Error).name === "ConnectionClosed") throw e;
    // an error line of the pull: reported as the daemon's refusal
    throw new DaemonError(500, (e as Error).message);
  }
}
