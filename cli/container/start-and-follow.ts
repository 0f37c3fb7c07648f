/**
 * Starting a container with the client staying on it, in the Docker CLI's order: attach first
 * (nothing the process writes at once is lost), the wait sent (an exit as fast as the start
 * is not missed), then the start; then the TTY size kept in step, the streams followed until
 * they end or the user detaches, and the exit status read. Shared by `run` and `start -a`.
 */
import type { CommandContext } from "../command.js";
import { AttachSession, type AttachEnd, type AttachOptions } from "./attach-session.js";
import { forwardSignals } from "./signals.js";
import { waitForExit, type WaitCondition } from "./wait-exit.js";

export interface FollowOptions {
  id: string;
  /** What to attach; none for `run -d`. */
  attach?: AttachOptions;
  sigProxy: boolean;
  /** What to wait for (`removed` with --rm); none when nothing will read the status. */
  wait?: WaitCondition;
  /** Said between the create and the start (`run -d` prints the id there, as Docker does). */
  beforeStart?: () => void;
}

export type FollowEnd = { status: number } | { detached: true };

/** The start's refusal is thrown once the attach is closed and an auto-removal done. */
export async function startAndFollow(ctx: CommandContext, o: FollowOptions): Promise<FollowEnd> {
  const conn = ctx.connection();
  const session = o.attach ? await AttachSession.open(conn, o.id, o.attach, ctx.stderr) : undefined;
  const stopSignals = o.sigProxy ? forwardSignals(conn, o.id) : () => undefined;
  let stopResize = () => {};
  try {
    const status = o.wait ? await waitForExit(conn, o.id, o.wait, ctx.stderr) : undefined;
    o.beforeStart?.();
    let streaming: Promise<AttachEnd> | undefined;
    try {
      streaming = session?.run();
      // A failed start ends the stream too: its outcome is the start's error, not the stream's.
      streaming?.catch(() => undefined);
      const res = await conn.call("POST", `/containers/${encodeURIComponent(o.id)}/start`);
      res.body.resume();
    } catch (e) {
      session?.close();
      if (o.wait === "removed" && status) await status();
      throw e;
    }
    if (session && o.attach?.tty && process.stdout.isTTY) {
      const { monitorTtySize } = await import("./resize.js");
      stopResize = monitorTtySize(conn, `/containers/${encodeURIComponent(o.id)}`);
    }
    if (streaming && (await streaming) === "detached") return { detached: true };
    if (!o.attach?.stdout && !o.attach?.stderr) return { status: 0 };
    return { status: status ? await status() : 0 };
  } finally {
    stopResize();
    stopSignals();
  }
}
