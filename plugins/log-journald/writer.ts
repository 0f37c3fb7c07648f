/**
 * Why this file: the per-container logger. Each message is one datagram to journald's native
 * socket with Docker's fields (see README.md). journald being absent fails the container's
 * start, as Docker does ("journald is not enabled on this host"). A send that fails later
 * drops that message with a report on the supervisor's stderr; the container goes on.
 *
 * Large entries: go-systemd passes an entry too big for a datagram through a memfd (SCM_RIGHTS),
 * which Node cannot send. Messages come here at most one pipe read long (conmon splits longer
 * lines into partial messages), far under the datagram limit; a message that would still pass
 * MAX_DATAGRAM is cut into partial entries, which readers join as they join Docker's.
 */
import { randomBytes } from "node:crypto";
import { connect } from "node:net";
import { DgramSocket } from "node-unix-socket";
import type { LoggerContext, LogMessageIn, LogWriter } from "../../core/contracts/log.js";
import { extraAttributes, logTag } from "../../core/log-attrs.js";
import { validateJournaldOptions } from "./options.js";
import { encodeEntry, sanitizeKey, type JournalFields } from "./protocol.js";

/** Where journald listens for native messages. Fixed, as in Docker: tests run engined in a mount namespace of their own. */
export const JOURNAL_SOCKET = "/run/systemd/journal/socket";
/** Room for the fields around MESSAGE, well under the 208 KiB a unix datagram may carry by default. */
const MAX_MESSAGE = 96 * 1024;

/** Whether journald listens: a stream connect answers EPROTOTYPE when a datagram socket is bound there. */
function journaldListens(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(path);
    probe.once("connect", () => {
      probe.destroy();
      resolve(false);
    });
    probe.once("error", (err: NodeJS.ErrnoException) => {
      probe.destroy();
      resolve(err.code === "EPROTOTYPE");
    });
  });
}

export class JournaldWriter implements LogWriter {
  readonly closed: Promise<void>;
  private markClosed!: () => void;
  private readonly sock = new DgramSocket();
  private queue: Promise<void> = Promise.resolve();
  private closing?: Promise<void>;
  private reported = false;
  /** The partial line being sent: Docker's PLogMetaData (an id, pieces counted from 1). */
  private partial?: { id: string; ordinal: number };

  constructor(
    private readonly vars: JournalFields,
    private readonly containerId: string,
    private readonly socketPath = JOURNAL_SOCKET,
  ) {
    this.closed = new Promise((res) => (this.markClosed = res));
    this.sock.on("error", () => {}); // each send reports its own failure
  }

  write(msg: LogMessageIn): Promise<void> {
    if (this.closing) return Promise.reject(new Error(`journald: the logger of container ${this.containerId} is closed`));
    const pieces: { line: Buffer; partial: boolean }[] = [];
    for (let off = 0; off < msg.line.length || off === 0; off += MAX_MESSAGE) {
      const end = Math.min(off + MAX_MESSAGE, msg.line.length);
      pieces.push({ line: msg.line.subarray(off, end), partial: end < msg.line.length || !!msg.partial });
      if (end >= msg.line.length) break;
    }
    for (const piece of pieces) {
      const data = encodeEntry(this.fields(piece.line, piece.partial, msg.stream));
      this.queue = this.queue.then(() => this.send(data));
    }
    return this.queue;
  }

  private fields(line: Buffer, partial: boolean, stream: "stdout" | "stderr"): JournalFields {
    const fields: JournalFields = [["PRIORITY", stream === "stderr" ? "3" : "6"], ["MESSAGE", line], ...this.vars];
    if (partial || this.partial) {
      this.partial ??= { id: randomBytes(32).toString("hex"), ordinal: 0 };
      this.partial.ordinal++;
      fields.push(["CONTAINER_PARTIAL_ID", this.partial.id], ["CONTAINER_PARTIAL_ORDINAL", String(this.partial.ordinal)], ["CONTAINER_PARTIAL_LAST", String(!partial)]);
      if (partial) fields.push(["CONTAINER_PARTIAL_MESSAGE", "true"]);
      else this.partial = undefined;
    }
    return fields;
  }

  private send(data: Buffer): Promise<void> {
    return new Promise((resolve) => {
      this.sock.sendTo(data, 0, data.length, this.socketPath, (err) => {
        if (err && !this.reported) process.stderr.write(`journald: container ${this.containerId}: a message was dropped: ${err.message}\n`);
        this.reported = !!err;
        resolve();
      });
    });
  }

  close(): Promise<void> {
    this.closing ??= this.queue
      .then(() => this.sock.close())
      .catch(() => {})
      .finally(() => this.markClosed());
    return this.closing;
  }
}

/** The fields every entry of this container carries, in Docker's names. */
export function containerFields(ctx: LoggerContext): JournalFields {
  const tag = logTag(ctx);
  const fields: JournalFields = [
    ["CONTAINER_ID", ctx.containerId.slice(0, 12)],
    ["CONTAINER_ID_FULL", ctx.containerId],
    ["CONTAINER_NAME", ctx.containerName.replace(/^\//, "")],
    ["CONTAINER_TAG", tag],
    ["IMAGE_NAME", ctx.imageName],
    ["SYSLOG_IDENTIFIER", tag],
  ];
  for (const [k, v] of Object.entries(extraAttributes(ctx, sanitizeKey))) fields.push([k, v]);
  return fields;
}

export async function createJournaldLogger(ctx: LoggerContext, socketPath = JOURNAL_SOCKET): Promise<JournaldWriter> {
  validateJournaldOptions(ctx.options);
  if (!(await journaldListens(socketPath))) throw new Error("journald is not enabled on this host");
  return new JournaldWriter(containerFields(ctx), ctx.containerId, socketPath);
}
