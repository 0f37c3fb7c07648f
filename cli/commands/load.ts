/** `engine load`: load images from a `save` archive or an OCI layout, streamed from a file or stdin. */
import { ExitError, type Command } from "../command.js";
import { readAll } from "../connection.js";
import { openInput } from "../progress/open-input.js";
import { platformQuery } from "../progress/platform.js";
import { followProgress } from "../progress/stream-output.js";

export const command: Command = {
  usage: "[OPTIONS]",
  flags: [
    { name: "input", short: "i", type: "string", description: "Read from tar archive file, instead of STDIN" },
    { name: "platform", type: "string", description: `Load only the given platform variant. Formatted as "os[/arch[/variant]]" (e.g., "linux/amd64")` },
    { name: "quiet", short: "q", type: "bool", description: "Suppress the load output" },
  ],
  args: { max: 0 },
  async run(ctx, { flags }) {
    const input = String(flags.input);
    // nothing would ever come from a terminal: say so instead of waiting
    if (input === "" && process.stdin.isTTY) throw new ExitError(1, "requested load from stdin, but stdin is empty");
    const body = openInput(input || "-");
    // without a terminal there is no progress to show, as with the Docker CLI
    const quiet = Boolean(flags.quiet) || !process.stdout.isTTY;
    const res = await ctx.connection().call("POST", "/images/load", {
      query: { quiet, platform: platformQuery(String(flags.platform)) },
      raw: body,
      contentType: "application/x-tar",
    });
    if ((res.headers["content-type"] ?? "").startsWith("application/json")) await followProgress(ctx, res.body);
    else ctx.stdout((await readAll(res.body)).toString("utf8"));
    return 0;
  },
};
