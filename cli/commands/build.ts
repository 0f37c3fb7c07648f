/**
 * `engine build`: build an image from a Dockerfile with the daemon's classic builder
 * (`POST /build`), as the Docker CLI's legacy builder does it: the context tarred here (the
 * folder filtered by `.dockerignore`, stdin, a clone, a download: cli/build/), "Sending build
 * context to Docker daemon", the daemon's stream shown as it comes (base image pulls too), and
 * a failed step's message with its status (a failed RUN exits with the command's own code).
 * With `-q` only the image ID is printed, and what was held back goes to stderr on failure.
 */
import { rmdirSync, unlinkSync, writeFileSync } from "node:fs";
import type { Readable } from "node:stream";
import { ExitError, type Command } from "../command.js";
import { DaemonError } from "../connection.js";
import { registryConfigFor } from "../auth/registry-auth.js";
import { BUILD_FLAGS, buildQuery, withDockerfile } from "../build/build-query.js";
import { refuseContentTrust } from "../container/content-trust.js";

export const command: Command = {
  usage: "[OPTIONS] PATH | URL | -",
  flags: BUILD_FLAGS,
  args: { min: 1, max: 1 },
  async run(ctx, input) {
    const { flags } = input;
    refuseContentTrust(flags);
    const query = buildQuery({ flags, given: input.given, specs: BUILD_FLAGS }, ctx.env, ctx.configDir);
    const [{ prepareContext, isUrl }, { withProgress }, { showProgress, StreamMessageError }] = await Promise.all([
      import("../build/prepare-context.js"),
      import("../build/transfer-progress.js"),
      import("../progress/show-progress.js"),
    ]);
    const quiet = Boolean(flags.quiet);
    const tty = Boolean(process.stdout.isTTY);
    const width = (tty && process.stdout.columns) || 200;
    // with -q the progress and the stream are held back: printed only if the build fails
    const held = { progress: "", build: "" };
    const progress = quiet ? (t: string) => void (held.progress += t) : ctx.stdout;
    const buildOut = quiet ? (t: string) => void (held.build += t) : ctx.stdout;

    const iidfile = String(flags.iidfile);
    if (iidfile) removeStale(iidfile);
    if (flags.squash) await requireExperimental(ctx.connection());

    const context = input.args[0];
    let cleanup = () => undefined as void;
    const stopOnSignal = cleanupOnSignal(() => cleanup());
    try {
      let prepared;
      try {
        prepared = await prepareContext({ context, dockerfile: String(flags.file), stdin: process.stdin, progress, warn: ctx.stderr, width });
      } catch (e) {
        if (quiet && isUrl(context)) ctx.stderr(`${held.progress}\n`);
        throw e;
      }
      cleanup = prepared.cleanup;
      let body: Readable = prepared.body;
      if (flags.compress) body = body.pipe((await import("node:zlib")).createGzip());
      const sending = withProgress(body, { action: "Sending build context to Docker daemon", write: progress, lastOnly: !tty, width });
      // a file that cannot be read as it is sent ends the upload: its message, not a stack
      let bodyError: Error | undefined;
      sending.once("error", (e) => (bodyError = e));
      let res;
      try {
        res = await ctx.connection().call("POST", "/build", {
          query: withDockerfile(query, prepared.dockerfile),
          raw: sending,
          contentType: "application/x-tar",
          headers: { "X-Registry-Config": registryConfigFor(ctx.configDir, ctx.stderr) },
        });
      } catch (e) {
        if (quiet && e instanceof DaemonError) ctx.stderr(held.progress);
        if (bodyError && !(e instanceof DaemonError)) throw new ExitError(1, bodyError.message);
        throw e;
      }
      let imageId = "";
      try {
        await showProgress(res.body, {
          stdout: buildOut,
          isTTY: tty,
          aux: (aux) => {
            const id = (aux as { ID?: unknown } | null)?.ID;
            if (typeof id === "string") imageId = id;
          },
        });
      } catch (e) {
        if (!(e instanceof StreamMessageError)) throw e;
        // the Docker CLI's reading of an error line: 401 is a login problem, any other code the exit status
        if (e.detailCode === 401) throw new ExitError(1, "authentication is required");
        if (quiet) ctx.stderr(`${held.progress}${held.build}`);
        throw new ExitError(e.detailCode || 1, e.message);
      }
      if (quiet) {
        imageId = held.build; // the daemon's one line, its newline included (the CLI writes it so to --iidfile too)
        ctx.stdout(held.build);
      }
      if (iidfile) {
        if (!imageId) throw new ExitError(1, `Server did not provide an image ID. Cannot write ${iidfile}`);
        writeFileSync(iidfile, imageId, { mode: 0o666 });
      }
      return 0;
    } finally {
      stopOnSignal();
      cleanup();
    }
  },
};

const GO_ERRORS: Record<string, string> = { ENOTEMPTY: "directory not empty", EACCES: "permission denied", EPERM: "operation not permitted", EBUSY: "device or resource busy" };

/** A stale ID file goes first, so that a failed build never leaves the last one's ID there (Go's os.Remove: an empty folder goes too). */
function removeStale(path: string): void {
  try {
    try {
      unlinkSync(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EISDIR") throw e;
      rmdirSync(path);
    }
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "";
    if (code !== "ENOENT") throw new ExitError(1, `Removing image ID file: remove ${path}: ${GO_ERRORS[code] ?? (e as Error).message}`);
  }
}

/** `--squash` needs a daemon with experimental features (its `_ping` says so). */
async function requireExperimental(conn: import("../connection.js").Connection): Promise<void> {
  const res = await conn.request("GET", "/_ping", { unversioned: true });
  res.body.resume();
  if (res.headers["docker-experimental"] !== "true") throw new ExitError(1, `"--squash" is only supported on a Docker daemon with experimental features enabled`);
}

/**
 * Ctrl-C (or SIGTERM) removes what the build made here (a clone), then ends the process by the
 * same signal: the connection closes with it, which cancels the build on the daemon.
 */
function cleanupOnSignal(cleanup: () => void): () => void {
  const signals: NodeJS.Signals[] = ["SIGINT", "SIGTERM"];
  const handler = (signal: NodeJS.Signals) => {
    for (const s of signals) process.off(s, handler);
    cleanup();
    process.kill(process.pid, signal);
  };
  for (const s of signals) process.on(s, handler);
  return () => {
    for (const s of signals) process.off(s, handler);
  };
}
