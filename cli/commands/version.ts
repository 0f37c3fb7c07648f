/**
 * `engine version`: the client's and the server's versions in `docker version`'s layout. The
 * client is not Docker's: its "Go version" line is "Node.js version" (the runtime it is built
 * on), and its Version, API version, Git commit and Built are the engine client's own.
 */
import { API_VERSION, BUILD_TIME, ENGINE_VERSION, GIT_COMMIT } from "../../core/version.js";
import type { VersionInfo } from "../../core/system-info.js";
import { ExitError, type Command } from "../command.js";
import { ansic } from "../format/human.js";
import { alignColumns } from "../format/table.js";
import { goJson, parseTemplate, struct, TemplateError } from "../format/template.js";

const arch = () => (process.arch === "x64" ? "amd64" : process.arch === "ia32" ? "386" : process.arch);

export const command: Command = {
  usage: "[OPTIONS]",
  flags: [{ name: "format", short: "f", type: "string", description: "Format output using a custom template: 'json' or a Go template" }],
  args: { max: 0 },
  async run(ctx, { flags }) {
    const format = flags.format as string;
    const conn = ctx.connection();
    let apiVersion = API_VERSION;
    let server: VersionInfo | undefined;
    let failure: unknown;
    try {
      apiVersion = await conn.apiVersion();
      server = await conn.getJson<VersionInfo>("/version");
    } catch (e) {
      failure = e;
    }
    const client = {
      Version: ENGINE_VERSION,
      ApiVersion: apiVersion,
      DefaultAPIVersion: API_VERSION,
      GitCommit: GIT_COMMIT.slice(0, 7),
      NodeVersion: process.version,
      Os: process.platform,
      Arch: arch(),
      BuildTime: ansic(BUILD_TIME),
      Context: "default",
    };

    if (format !== "") {
      // templates see Docker's field names (.Client.Version, .Server.APIVersion, ...)
      const data = struct("system.versionInfo", {
        Client: struct("system.clientVersion", { ...client, APIVersion: apiVersion, toJSON: () => client }),
        Server: server ? struct("*types.Version", { ...server, APIVersion: server.ApiVersion, toJSON: () => server }) : null,
        toJSON: () => ({ Client: client, Server: server ?? null }),
      });
      let template;
      try {
        template = format === "json" ? undefined : parseTemplate(format, "version");
      } catch (e) {
        if (e instanceof TemplateError) throw new ExitError(64, `template parsing error: ${e.message}`);
        throw e;
      }
      // As the Docker CLI: what the template wrote before a failure, a newline, then the
      // daemon's error if it failed (a template that needed the server fails with it), else the template's.
      try {
        ctx.stdout(`${template ? template.execute(data) : goJson(data)}\n`);
      } catch (e) {
        if (!(e instanceof TemplateError)) throw e;
        ctx.stdout(`${e.partial}\n`);
        if (!failure) throw new ExitError(1, e.message);
      }
      if (failure) throw failure;
      return 0;
    }

    const lines = [
      "Client:",
      ` Version:\t${client.Version}`,
      ` API version:\t${client.ApiVersion}${client.ApiVersion !== API_VERSION ? ` (downgraded from ${API_VERSION})` : ""}`,
      ` Node.js version:\t${client.NodeVersion}`,
      ` Git commit:\t${client.GitCommit}`,
      ` Built:\t${client.BuildTime}`,
      ` OS/Arch:\t${client.Os}/${client.Arch}`,
      ` Context:\t${client.Context}`,
    ];
    if (server) {
      lines.push("", `Server:${server.Platform?.Name ? ` ${server.Platform.Name}` : ""}`);
      const components = server.Components?.length
        ? server.Components
        : [
            {
              Name: "Engine",
              Version: server.Version,
              Details: { ApiVersion: server.ApiVersion, MinAPIVersion: server.MinAPIVersion, GitCommit: server.GitCommit, GoVersion: server.GoVersion, Os: server.Os, Arch: server.Arch, BuildTime: server.BuildTime, Experimental: String(server.Experimental) },
            },
          ];
      for (const c of components) {
        const d = c.Details ?? {};
        lines.push(` ${c.Name}:`);
        if (c.Name === "Engine") {
          lines.push(
            `  Version:\t${c.Version}`,
            `  API version:\t${d.ApiVersion ?? ""} (minimum version ${d.MinAPIVersion ?? ""})`,
            `  Go version:\t${d.GoVersion ?? ""}`,
            `  Git commit:\t${d.GitCommit ?? ""}`,
            `  Built:\t${d.BuildTime ? ansic(d.BuildTime) : ""}`,
            `  OS/Arch:\t${d.Os ?? ""}/${d.Arch ?? ""}`,
            `  Experimental:\t${d.Experimental ?? ""}`,
          );
        } else {
          lines.push(`  Version:\t${c.Version}`, ...Object.keys(d).sort().map((k) => `  ${k}:\t${d[k]}`));
        }
      }
    }
    ctx.stdout(alignColumns(`${lines.join("\n")}\n`, { minWidth: 20, padding: 1 }));
    if (failure) throw failure;
    return 0;
  },
};
