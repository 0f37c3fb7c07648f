/**
 * `--use-api-socket`, as the Docker CLI 28 does it: the daemon's socket bound into the
 * container at /var/run/docker.sock (where SDKs and CLIs look), and, unless the container's
 * environment names a DOCKER_CONFIG of its own, the client's saved registry credentials written
 * after the create to /run/secrets/docker/config.json (a `{"auths": ...}` file, mode 0600) with
 * DOCKER_CONFIG pointing there. The socket is the one this client talks to: a daemon reached
 * over TCP or SSH has none to give, and the flag is refused.
 */
import { pack } from "tar-stream";
import type { CommandContext } from "../command.js";
import type { Connection } from "../connection.js";
import type { CreateBody } from "./container-config.js";

const CONFIG_IN_CONTAINER = "/run/secrets/docker/config.json";

export class ApiSocket {
  private constructor(private readonly auths: Record<string, { auth?: string; identitytoken?: string }>) {}

  /** Adds the socket's mount (and DOCKER_CONFIG) to `body`; reads the credentials to give. */
  static async prepare(ctx: CommandContext, body: CreateBody): Promise<ApiSocket> {
    const target = await ctx.connection().target();
    if (target.proto !== "unix") {
      const where = target.proto === "tcp" ? `tcp://${target.host}:${target.port}${target.prefix}` : `ssh://${target.user ? `${target.user}@` : ""}${target.host}:${target.port}`;
      throw new Error(`flag --use-api-socket can only be used with unix sockets: engine endpoint ${where} incompatible`);
    }
    const mounts = (body.HostConfig.Mounts ??= []);
    mounts.push({ Type: "bind", Source: target.path, Target: "/var/run/docker.sock", BindOptions: {} });
    const auths: Record<string, { auth?: string; identitytoken?: string }> = {};
    if (!(body.Env ?? []).some((e) => e.startsWith("DOCKER_CONFIG="))) {
      const { allCredentials } = await import("../auth/config.js");
      for (const [key, c] of allCredentials(ctx.configDir, ctx.stderr)) {
        auths[key] = {
          ...(c.username || c.password ? { auth: Buffer.from(`${c.username}:${c.password}`).toString("base64") } : {}),
          ...(c.identitytoken ? { identitytoken: c.identitytoken } : {}),
        };
      }
      if (Object.keys(auths).length) body.Env = [...(body.Env ?? []), "DOCKER_CONFIG=/run/secrets/docker"];
    }
    return new ApiSocket(auths);
  }

  /** Copies the credentials file into the new container (nothing when there are none). */
  async inject(conn: Connection, id: string): Promise<void> {
    if (Object.keys(this.auths).length === 0) return;
    const text = Buffer.from(JSON.stringify({ auths: this.auths }, null, "\t"));
    const tar = pack();
    tar.entry({ name: CONFIG_IN_CONTAINER, size: text.length, mode: 0o600 }, text);
    tar.finalize();
    const chunks: Buffer[] = [];
    for await (const chunk of tar) chunks.push(chunk as Buffer);
    try {
      await conn.call("PUT", `/containers/${id}/archive`, { query: { noOverwriteDirNonDir: "true", path: "/" }, raw: Buffer.concat(chunks), contentType: "application/x-tar" });
    } catch (e) {
      throw new Error(`injecting docker config.json into container failed: copying config.json into container failed: ${(e as Error).message}`);
    }
  }
}
