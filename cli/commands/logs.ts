/** `engine logs`: print a container's log (stdout to stdout, stderr to stderr; raw with a TTY), following it with -f. */
import type { Command } from "../command.js";
import { timestampFlag } from "../container/timestamps.js";

export const command: Command = {
  usage: "[OPTIONS] CONTAINER",
  flags: [
    { name: "details", type: "bool", description: "Show extra details provided to logs" },
    { name: "follow", short: "f", type: "bool", description: "Follow log output" },
    { name: "since", type: "string", description: `Show logs since timestamp (e.g. "2013-01-02T13:23:37Z") or relative (e.g. "42m" for 42 minutes)` },
    { name: "tail", short: "n", type: "string", description: "Number of lines to show from the end of the logs", default: "all" },
    { name: "timestamps", short: "t", type: "bool", description: "Show timestamps" },
    { name: "until", type: "string", description: `Show logs before a timestamp (e.g. "2013-01-02T13:23:37Z") or relative (e.g. "42m" for 42 minutes)` },
  ],
  args: { min: 1, max: 1 },
  async run(ctx, { flags, args }) {
    const conn = ctx.connection();
    // The container's TTY decides how to read the stream: the Docker CLI inspects first too.
    const c = await conn.getJson<{ Id: string; Config: { Tty?: boolean } }>(`/containers/${encodeURIComponent(args[0])}/json`);
    const time = (name: "since" | "until") => timestampFlag(String(flags[name]), (why) => `invalid value for "${name}": ${why}`);
    const res = await conn.call("GET", `/containers/${c.Id}/logs`, {
      query: {
        stdout: true,
        stderr: true,
        since: time("since"),
        until: time("until"),
        timestamps: flags.timestamps || undefined,
        details: flags.details || undefined,
        follow: flags.follow || undefined,
        tail: String(flags.tail),
      },
    });
    const { processSinks, copyTo } = await import("../container/output.js");
    if (c.Config.Tty) await copyTo(res.body, processSinks.stdout);
    else await (await import("../container/stdcopy.js")).demultiplex(res.body, processSinks);
    return 0;
  },
};
