/**
 * Exec and attach over SPDY/3.1, as the kubelet's remotecommand server serves client-go's SPDY
 * executor: protocols `v5.channel.k8s.io` (the same as v4 on SPDY, which half-closes streams by
 * itself) down to `channel.k8s.io`; the client opens one stream per channel, named by its
 * `streamType` header (error, stdin, stdout, stderr, and resize from v3 with a terminal). The
 * session starts once every stream it needs is there (30 s at most, as the kubelet's stream
 * creation timeout). At the end the output streams are closed, the status goes on the error
 * stream (JSON from v4), and the session goes away.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { setTimeout as delay } from "node:timers/promises";
import { RST_REFUSED_STREAM } from "./spdy/spdy-frames.js";
import type { SpdyStream } from "./spdy/spdy-session.js";
import { negotiateSpdy, upgradeToSpdy } from "./spdy/spdy-upgrade.js";
import { resizeParser, statusBytes, type SessionChannels, type TerminalSize } from "./session-channels.js";
import type { StreamOptions } from "./ws-remote-command.js";

export const SPDY_COMMAND_PROTOCOLS = ["v5.channel.k8s.io", "v4.channel.k8s.io", "v3.channel.k8s.io", "v2.channel.k8s.io", "channel.k8s.io"] as const;

const STREAM_CREATION_TIMEOUT_MS = 30_000;
const KINDS = new Set(["error", "stdin", "stdout", "stderr", "resize"]);

/** The session's channels, or undefined when the upgrade was refused or the client did not open its streams in time. */
export async function spdyCommandChannels(req: IncomingMessage, socket: Duplex, head: Buffer, opts: StreamOptions & { tty: boolean }): Promise<SessionChannels | undefined> {
  const protocol = negotiateSpdy(req, socket, SPDY_COMMAND_PROTOCOLS);
  if (!protocol) return undefined;
  const version = protocol === "channel.k8s.io" ? 1 : Number(protocol[1]);
  const expected = new Set(["error"]);
  if (opts.stdin) expected.add("stdin");
  if (opts.stdout) expected.add("stdout");
  if (opts.stderr && !opts.tty) expected.add("stderr");
  if (opts.tty && version >= 3) expected.add("resize");
  const streams = new Map<string, SpdyStream>();
  const gone = new AbortController();
  let finished = false;
  let allThere: () => void = () => {};
  const ready = new Promise<void>((resolve) => (allThere = resolve));
  const session = upgradeToSpdy(socket, head, protocol, {
    onStream(stream) {
      const kind = stream.headers.streamtype;
      if (!KINDS.has(kind) || streams.has(kind)) return void session.refuse(stream, RST_REFUSED_STREAM);
      streams.set(kind, stream);
      void session.accept(stream);
      if ([...expected].every((k) => streams.has(k))) allThere();
    },
    onClose() {
      if (!finished) gone.abort();
      allThere();
    },
  });
  const timer = delay(STREAM_CREATION_TIMEOUT_MS, "timeout" as const, { ref: false });
  if ((await Promise.race([ready.then(() => "ready" as const), timer])) === "timeout" || gone.signal.aborted) {
    await session.goAway();
    return undefined;
  }
  const resizeListeners: ((size: TerminalSize) => void)[] = [];
  const resize = streams.get("resize");
  if (resize) {
    const parse = resizeParser((size) => resizeListeners.forEach((l) => l(size)));
    resize.input.on("data", parse);
    resize.input.on("error", () => {});
  }
  const writer = (kind: string) => {
    const s = streams.get(kind);
    return s ? { write: (data: Buffer) => s.write(data) } : null;
  };
  return {
    stdin: opts.stdin ? (streams.get("stdin")?.input ?? null) : null,
    stdout: writer("stdout"),
    stderr: writer("stderr"),
    onResize: (l) => void resizeListeners.push(l),
    gone: gone.signal,
    async finish(status) {
      finished = true;
      for (const kind of ["stdout", "stderr"]) await streams.get(kind)?.end();
      const error = streams.get("error");
      if (error) {
        const bytes = statusBytes(status, version >= 4);
        if (bytes.length) await error.write(bytes);
        await error.end();
      }
      await session.goAway();
    },
  };
}
