/** `engine version`: the client's and the server's versions, as `docker version` shows them. */
import { API_VERSION, ENGINE_VERSION, GIT_COMMIT } from "../../core/version.js";
import type { VersionInfo } from "../../core/system-info.js";
import type { Command } from "../command.js";

export const command: Command = {
  usage: "[OPTIONS]",
  flags: [],
  args: { max: 0 },
  async run(ctx) {
    const out = [
      "Client:",
      `  Version:           ${ENGINE_VERSION}`,
      `  API version:       ${API_VERSION}`,
      `  Node.js version:   ${process.version}`,
      `  Git commit:        ${GIT_COMMIT.slice(0, 7)}`,
      `  OS/Arch:           ${process.platform}/${process.arch === "x64" ? "amd64" : process.arch}`,
      "",
    ];
    ctx.stdout(out.join("\n") + "\n");
    const server = await ctx.connection().getJson<VersionInfo>("/version");
    const lines = [
      `Server: ${server.Platform?.Name ?? ""}`,
      ...server.Components.map((c) => [
        ` ${c.Name}:`,
        `  Version:          ${c.Version}`,
        ...Object.entries(c.Details ?? {}).map(([k, v]) => `  ${`${k}:`.padEnd(17)} ${v}`),
      ]).flat(),
    ];
    ctx.stdout(lines.join("\n") + "\n");
    return 0;
  },
};
