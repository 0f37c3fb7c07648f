/**
 * What an exec or attach session sees of its client, whichever protocol carries it (WebSocket
 * channels: ws-remote-command.ts; SPDY streams: spdy-remote-command.ts): the client's input,
 * writers for the output, the terminal sizes it sends, and the end, where the session's status
 * goes on the error channel as the kubelet writes it (`metav1.Status` JSON from protocol v4 on,
 * the message alone before).
 */
import type { Readable } from "node:stream";

export interface TerminalSize {
  width: number;
  height: number;
}

export interface ChannelWriter {
  /** Resolves once the transport has taken the data (the session reads on only then). */
  write(data: Buffer): Promise<void>;
}

export interface SessionChannels {
  /** The client's input; it ends when the client closes its stdin. Null without stdin. */
  stdin: Readable | null;
  stdout: ChannelWriter | null;
  stderr: ChannelWriter | null;
  /** Called with each size the client sends on its resize channel (a TTY session). */
  onResize(listener: (size: TerminalSize) => void): void;
  /** Aborted when the client goes away. */
  gone: AbortSignal;
  /** Sends the status on the error channel and closes the session. */
  finish(status: CommandStatus): Promise<void>;
}

/** A metav1.Status as the kubelet's remotecommand server writes it. */
export interface CommandStatus {
  metadata: Record<string, never>;
  status: "Success" | "Failure";
  message?: string;
  reason?: string;
  details?: { causes: { reason?: string; message: string }[] };
  code?: number;
}

export function successStatus(): CommandStatus {
  return { metadata: {}, status: "Success" };
}

/** A command that ended with a code other than 0: kubectl prints "command terminated with exit code N" and exits with N. */
export function exitCodeStatus(code: number, cmd: string[]): CommandStatus {
  return {
    metadata: {},
    status: "Failure",
    message: `command terminated with non-zero exit code: error executing command [${cmd.join(" ")}], exit code ${code}`,
    reason: "NonZeroExitCode",
    details: { causes: [{ reason: "ExitCode", message: String(code) }] },
  };
}

/** Anything else that went wrong: an internal error, as the kubelet reports it. */
export function internalErrorStatus(why: string): CommandStatus {
  return { metadata: {}, status: "Failure", message: `Internal error occurred: ${why}`, reason: "InternalError", details: { causes: [{ message: why }] }, code: 500 };
}

/** The error channel's bytes for the negotiated protocol version: JSON from v4 on, before it the message alone (and nothing on success). */
export function statusBytes(status: CommandStatus, structured: boolean): Buffer {
  if (structured) return Buffer.from(JSON.stringify(status));
  return Buffer.from(status.status === "Success" ? "" : (status.message ?? "error"));
}

/** The resize channel's JSON (`{"Width":80,"Height":24}`), each object as it completes. */
export function resizeParser(listener: (size: TerminalSize) => void): (data: Buffer) => void {
  let buf = "";
  return (data) => {
    buf += data.toString("utf8");
    // objects come back to back, possibly cut across messages: take each complete one
    for (;;) {
      const end = buf.indexOf("}");
      if (end < 0) return;
      const text = buf.slice(0, end + 1);
      buf = buf.slice(end + 1);
      try {
        const v = JSON.parse(text.slice(text.indexOf("{"))) as { Width?: number; Height?: number };
        if (typeof v.Width === "number" && typeof v.Height === "number") listener({ width: v.Width, height: v.Height });
      } catch {
        // not a size: ignored, as the kubelet ignores a size it cannot decode
      }
    }
  };
}
