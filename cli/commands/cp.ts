/**
 * `engine cp`: files between a container and here, either way (`-` for a tar on stdin or
 * stdout), as `docker cp` copies them (cli/archive/copy-*.ts). On a terminal (or with
 * --quiet=false) a line on stderr says how much went where once the transfer began, even when
 * it then failed, as the Docker CLI 28 prints it.
 */
import { resolve } from "node:path";
import { ExitError, type Command } from "../command.js";
import { copyFromContainer, type CopyRequest } from "../archive/copy-from-container.js";
import { copyToContainer } from "../archive/copy-to-container.js";
import type { Transfer } from "../archive/container-path.js";
import { preserveTrailingDotOrSeparator, splitCpArg } from "../archive/copy-paths.js";
import { DaemonError } from "../connection.js";
import { humanSize } from "../../core/go-units.js";

/** An absolute local path that keeps what a trailing `/` or `/.` asserts. */
const localPath = (p: string) => preserveTrailingDotOrSeparator(resolve(p), p);

export const command: Command = {
  usage: "[OPTIONS] CONTAINER:SRC_PATH DEST_PATH|-\n\tengine cp [OPTIONS] SRC_PATH|- CONTAINER:DEST_PATH",
  flags: [
    { name: "archive", short: "a", type: "bool", description: "Archive mode (copy all uid/gid information)" },
    { name: "follow-link", short: "L", type: "bool", description: "Always follow symbol link in SRC_PATH" },
    { name: "quiet", short: "q", type: "bool", description: "Suppress progress output during copy. Progress output is automatically suppressed if no terminal is attached" },
  ],
  args: { min: 2, max: 2 },
  async run(ctx, { flags, given, args }) {
    if (args[0] === "") throw new ExitError(1, "source can not be empty");
    if (args[1] === "") throw new ExitError(1, "destination can not be empty");
    const quiet = given.has("quiet") ? Boolean(flags.quiet) : !process.stdout.isTTY;
    const src = splitCpArg(args[0]);
    const dst = splitCpArg(args[1]);
    if (src.container && dst.container) throw new ExitError(1, "copying between containers is not supported");
    if (!src.container && !dst.container) throw new ExitError(1, "must specify at least one container source");
    const req: CopyRequest = {
      container: src.container || dst.container,
      srcPath: src.container || src.path === "-" ? src.path : localPath(src.path),
      dstPath: dst.container || dst.path === "-" ? dst.path : localPath(dst.path),
      followLink: Boolean(flags["follow-link"]),
      copyUIDGID: Boolean(flags.archive),
    };
    const conn = ctx.connection();
    const transfer: Transfer = { bytes: 0 };
    try {
      if (src.container) await copyFromContainer(conn, req, transfer, process.stdout);
      else await copyToContainer(conn, req, transfer, process.stdin);
    } catch (e) {
      if (e instanceof DaemonError || e instanceof ExitError) throw e;
      throw new ExitError(1, (e as Error).message);
    } finally {
      if (!quiet && transfer.to !== undefined) ctx.stderr(`Successfully copied ${humanSize(transfer.bytes, 3)} to ${transfer.to}\n`);
    }
    return 0;
  },
};
