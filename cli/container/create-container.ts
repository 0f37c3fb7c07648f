/**
 * `POST /containers/create` as `run` and `create` do it: with `--pull missing` an image the
 * daemon does not have is pulled (its progress on stderr, as the Docker CLI shows it) and the
 * create tried again; `--pull always` pulls first. The daemon's warnings go to stderr.
 */
import type { CommandContext } from "../command.js";
import { DaemonError, type Connection } from "../connection.js";
import type { ContainerRequest } from "./container-config.js";

export async function createContainer(ctx: CommandContext, req: ContainerRequest): Promise<string> {
  const conn = ctx.connection();
  if (req.pull === "always") await pullImage(ctx, conn, req);
  const create = () =>
    conn.json<{ Id: string; Warnings?: string[] | null }>("POST", "/containers/create", {
      query: { name: req.name || undefined },
      json: req.body,
    });
  let created;
  try {
    created = await create();
  } catch (e) {
    // Only a missing image is pulled: a 404 for a missing network must not start a download.
    if (!(e instanceof DaemonError) || e.status !== 404 || req.pull !== "missing" || !/^No such image/i.test(e.daemonMessage)) throw e;
    const { familiarString, parseNormalizedNamed } = await import("../reference.js");
    const ref = parseNormalizedNamed(req.image);
    if (ref.tag === undefined && ref.digest === undefined) ref.tag = "latest";
    ctx.stderr(`Unable to find image '${familiarString(ref)}' locally\n`);
    await pullImage(ctx, conn, req);
    created = await create();
  }
  for (const w of created.Warnings ?? []) ctx.stderr(`WARNING: ${w}\n`);
  return created.Id;
}

async function pullImage(ctx: CommandContext, conn: Connection, req: ContainerRequest): Promise<void> {
  const { parseNormalizedNamed, repositoryName } = await import("../reference.js");
  const { registryAuthFor } = await import("../auth/registry-auth.js");
  const ref = parseNormalizedNamed(req.image);
  const res = await conn.call("POST", "/images/create", {
    query: { fromImage: repositoryName(ref), tag: ref.digest ?? ref.tag ?? "latest" },
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
