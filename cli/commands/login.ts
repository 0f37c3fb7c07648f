/** `engine login`: check credentials with a registry (through the daemon) and save them in config.json. */
import { readFileSync } from "node:fs";
import { ExitError, type Command, type CommandContext } from "../command.js";
import { DaemonError } from "../connection.js";
import { convertToHostname, credentialsFor, storeCredentials, type Credentials } from "../auth/config.js";
import { INDEX_SERVER } from "../auth/registry-auth.js";

interface AuthAnswer {
  Status?: string;
  IdentityToken?: string;
}

/** POST /auth; a saved identity token replaces the password, as the Docker CLI saves it. */
async function authenticate(ctx: CommandContext, serveraddress: string, creds: Credentials): Promise<string> {
  const body: Record<string, string> = { username: creds.username, password: creds.password, serveraddress };
  if (creds.identitytoken) body.identitytoken = creds.identitytoken;
  const answer = (await ctx.connection().json<AuthAnswer>("POST", "/auth", { json: body })) ?? {};
  const saved: Credentials = answer.IdentityToken ? { username: creds.username, password: "", identitytoken: answer.IdentityToken } : creds;
  storeCredentials(ctx.configDir, serveraddress, saved);
  return answer.Status ?? "";
}

export const command: Command = {
  usage: "[OPTIONS] [SERVER]",
  flags: [
    { name: "password", short: "p", type: "string", description: "Password or Personal Access Token (PAT)" },
    { name: "password-stdin", type: "bool", description: "Take the Password or Personal Access Token (PAT) from stdin" },
    { name: "username", short: "u", type: "string", description: "Username" },
  ],
  args: { max: 1 },
  async run(ctx, { flags, args }) {
    let username = String(flags.username);
    let password = String(flags.password);
    // the conflict is a flag error: it comes before the warning, as with the Docker CLI
    if (password !== "" && flags["password-stdin"]) throw new ExitError(1, "conflicting options: cannot specify both --password and --password-stdin");
    if (password !== "") ctx.stderr("WARNING! Using --password via the CLI is insecure. Use --password-stdin.\n");
    if (flags["password-stdin"]) {
      if (username === "") throw new ExitError(1, "the --password-stdin option requires --username to be set");
      password = readFileSync(0, "utf8").replace(/\n$/, "").replace(/\r$/, "");
    }
    const given = args[0] ?? "";
    // other registries are saved under host[:port], as `docker login` saves them
    const server = given !== "" && given !== "docker.io" && given !== INDEX_SERVER ? convertToHostname(given) : INDEX_SERVER;

    // No user or password given: the saved credentials are tried first.
    const saved = credentialsFor(ctx.configDir, server, ctx.stderr);
    if (username === "" && password === "" && saved?.username && (saved.password || saved.identitytoken)) {
      ctx.stdout(`Authenticating with existing credentials... [Username: ${saved.username}]\nTo login with a different account, run 'engine logout' followed by 'engine login'\n\n`);
      try {
        ctx.stdout(`${await authenticate(ctx, server, saved)}\n`);
        return 0;
      } catch (e) {
        if (!(e instanceof DaemonError)) throw e;
        ctx.stderr(e.status === 401 ? "Stored credentials invalid or expired\n" : `Login did not succeed, error: ${e.message}\n`);
      }
    }

    if ((username === "" || password === "") && !process.stdin.isTTY) throw new ExitError(1, "Error: Cannot perform an interactive login from a non TTY device");
    if (username.trim() === "") {
      const fallback = saved?.username ?? "";
      const { promptLine } = await import("../auth/prompt.js");
      username = (await promptLine(fallback ? `Username (${fallback}): ` : "Username: ", ctx.stdout)).trim() || fallback;
      if (username === "") throw new ExitError(1, "Error: Non-null Username Required");
    }
    if (password.trim() === "") {
      const { promptLine } = await import("../auth/prompt.js");
      password = (await promptLine("Password: ", ctx.stdout, true)).trim();
      ctx.stdout("\n");
      if (password === "") throw new ExitError(1, "Error: Password Required");
    }
    ctx.stdout(`${await authenticate(ctx, server, { username: username.trim(), password })}\n`);
    return 0;
  },
};
