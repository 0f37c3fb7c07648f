/**
 * Why this file: the per-container logger. It dials when it is made (a server that cannot be
 * reached fails the container's start, as with Docker), then formats and sends each message
 * in order. As Docker's library does, a send that fails dials again once and resends; if that
 * fails too the message is dropped and the failure reported on the supervisor's stderr (the
 * container goes on; its output stays in the daemon's cache for `docker logs`).
 */
import { hostname } from "node:os";
import type { LoggerContext, LogMessageIn, LogWriter } from "../../core/contracts/log.js";
import { logTag } from "../../core/log-attrs.js";
import { formatMessage, frame, type Header } from "./format.js";
import { parseAddress, parseFacility, parseFormat, validateSyslogOptions, type SyslogAddress, type SyslogFormat } from "./options.js";
import { dial, type Conn, type TlsFiles } from "./transport.js";

const SEVERITY = { stdout: 6, stderr: 3 } as const;

export class SyslogWriter implements LogWriter {
  readonly closed: Promise<void>;
  private markClosed!: () => void;
  private queue: Promise<void> = Promise.resolve();
  private closing?: Promise<void>;
  private reported = false;

  constructor(
    private conn: Conn | undefined,
    private readonly target: SyslogAddress,
    private readonly tls: TlsFiles,
    private readonly format: SyslogFormat,
    private readonly facility: number,
    private readonly header: Omit<Header, "priority">,
    private readonly containerId: string,
  ) {
    this.closed = new Promise((res) => (this.markClosed = res));
  }

  write(msg: LogMessageIn): Promise<void> {
    if (this.closing) return Promise.reject(new Error(`syslog: the logger of container ${this.containerId} is closed`));
    // Docker sends nothing for an empty line.
    if (msg.line.length === 0) return this.queue;
    const timeNs = msg.timeNs ?? BigInt(msg.time.getTime()) * 1_000_000n;
    const data = frame(this.format, this.target.proto, formatMessage(this.format, { ...this.header, priority: this.facility | SEVERITY[msg.stream] }, msg.line, timeNs));
    this.queue = this.queue.then(() => this.send(data));
    return this.queue;
  }

  private async send(data: Buffer): Promise<void> {
    try {
      if (this.conn) return await this.conn.send(data);
    } catch {
      // dial again below
    }
    try {
      await this.conn?.close().catch(() => {});
      this.conn = undefined;
      this.conn = await dial(this.target.proto, this.target.address, this.tls);
      await this.conn.send(data);
      this.reported = false;
    } catch (err) {
      if (!this.reported) process.stderr.write(`syslog: container ${this.containerId}: a message was dropped: ${(err as Error).message}\n`);
      this.reported = true;
    }
  }

  close(): Promise<void> {
    this.closing ??= this.queue
      .then(() => this.conn?.close())
      .catch(() => {})
      .finally(() => this.markClosed());
    return this.closing;
  }
}

/** Makes the logger of one container: checks the options, expands the tag, dials. */
export async function createSyslogLogger(ctx: LoggerContext): Promise<SyslogWriter> {
  const o = ctx.options;
  validateSyslogOptions(o);
  const tag = logTag(ctx);
  const target = parseAddress(o["syslog-address"]);
  const facility = parseFacility(o["syslog-facility"]);
  const format = parseFormat(o["syslog-format"]);
  // Docker's tls config treats the key's presence as "skip", whatever its value.
  const tls: TlsFiles = { ca: o["syslog-tls-ca-cert"], cert: o["syslog-tls-cert"], key: o["syslog-tls-key"], skipVerify: o["syslog-tls-skip-verify"] !== undefined };
  const conn = await dial(target.proto, target.address, tls);
  return new SyslogWriter(conn, target, tls, format, facility, { hostname: hostname(), tag, pid: process.pid }, ctx.containerId);
}
