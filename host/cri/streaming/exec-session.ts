/**
 * An exec session on the streaming server: the command runs as ExecSync's does (exec-sync.ts,
 * an exec session of the supervisor under a conmon of its own), but kept open to its client:
 * stdin goes in through that conmon's attach socket, the output is followed in its log as it
 * comes (as `docker exec` does: nothing is lost before the client reads), a terminal gets the
 * sizes the client sends. When the process has exited and its output is sent, its status goes
 * on the error channel. A client that goes away first takes the process with it (SIGKILL), as
 * containerd's CRI does: nobody could read it any more.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import type { Logger } from "pino";
import type { OciSpec, RuntimeDriver } from "../../../core/contracts/runtime.js";
import { AttachInput } from "../../containers/attach-socket.js";
import { followK8sLogBatches } from "../../containers/k8s-log-follow.js";
import { followedPipeReads } from "../../containers/k8s-log-reads.js";
import type { SupervisorClient } from "../../supervisor/client.js";
import type { ExecSyncTarget } from "../containers/exec-sync.js";
import { exitCodeStatus, internalErrorStatus, successStatus, type SessionChannels, type TerminalSize } from "./session-channels.js";
import type { ExecTicket } from "./stream-tokens.js";
import { pumpInput } from "./stdin-pump.js";

/** How long a terminal session waits for the client's first size before it starts the process without one. */
const FIRST_SIZE_WAIT_MS = 1000;

export interface ExecSessionDeps {
  supervisor: () => Promise<SupervisorClient>;
  runtime: RuntimeDriver;
  log: Logger;
}

export async function runExecSession(deps: ExecSessionDeps, target: ExecSyncTarget, ticket: Pick<ExecTicket, "cmd" | "tty">, channels: SessionChannels): Promise<void> {
  const sup = await deps.supervisor();
  const execId = randomBytes(32).toString("hex");
  let started = false;
  try {
    // A size sent before the process runs is applied once it does; with a terminal, the
    // client's first size (kubectl sends it at once) is waited for a moment, so that the
    // process starts with it rather than with none.
    let size: TerminalSize | undefined;
    let firstSize: () => void = () => {};
    const sized = new Promise<void>((resolve) => (firstSize = resolve));
    const resize = (s: TerminalSize) => {
      size = s;
      firstSize();
      if (started) void sup.execResize(target.id, execId, s.height, s.width).catch(() => {});
    };
    channels.onResize(resize);
    if (ticket.tty) await Promise.race([sized, delay(FIRST_SIZE_WAIT_MS, undefined, { ref: false })]);
    let process;
    try {
      const spec = JSON.parse(readFileSync(join(target.bundle, "config.json"), "utf8")) as OciSpec;
      const consoleSize: [number, number] | null = size ? [size.height, size.width] : null;
      process = deps.runtime.execProcess({ spec, rootfs: target.rootfs, exec: { Cmd: ticket.cmd, Env: [], Tty: ticket.tty, ConsoleSize: consoleSize } });
    } catch (err) {
      return await channels.finish(internalErrorStatus((err as Error).message));
    }
    let state;
    try {
      // with a terminal the process's stdin stays open when the attach connection goes (as docker exec -t)
      state = await sup.exec(target.id, { execId, process, terminal: ticket.tty, stdin: channels.stdin !== null, leaveStdinOpen: ticket.tty });
    } catch (err) {
      return await channels.finish(internalErrorStatus((err as Error).message));
    }
    started = true;
    if (size) resize(size);
    const exit = sup.execWait(target.id, execId);
    const onGone = () => {
      try {
        globalThis.process.kill(state.pid, "SIGKILL");
      } catch {
        // it has exited already
      }
    };
    channels.gone.addEventListener("abort", onGone, { once: true });
    if (channels.stdin) {
      const input = new AttachInput(state.attachPath, (err) => deps.log.debug({ err, exec: execId }, "exec stdin: the attach socket failed"));
      void pumpInput(channels.stdin, input, channels.gone);
    }
    try {
      const to = (stream: "stdout" | "stderr") => (stream === "stdout" ? channels.stdout : channels.stderr);
      for await (const read of followedPipeReads(followK8sLogBatches(state.logPath, exit, channels.gone), (stream) => to(stream) !== null)) {
        await to(read.stream)?.write(read.data);
      }
    } finally {
      channels.gone.removeEventListener("abort", onGone);
    }
    if (channels.gone.aborted) {
      await exit.catch(() => {});
      return;
    }
    const code = await exit.catch((err: Error) => {
      deps.log.warn({ err, exec: execId }, "lost track of a streamed exec");
      return -1;
    });
    if (code < 0) return await channels.finish(internalErrorStatus("the exec session's exit code could not be read"));
    await channels.finish(code === 0 ? successStatus() : exitCodeStatus(code, ticket.cmd));
  } finally {
    if (started) await sup.execRemove(target.id, execId).catch(() => {});
  }
}
