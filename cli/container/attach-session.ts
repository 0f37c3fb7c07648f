/**
 * A hijacked attach (or exec start) connection and the client's terminal, as the Docker CLI's streamer: output
 * demultiplexed to stdout and stderr (raw with a TTY), stdin copied to the connection (its end
 * half-closes the connection, which ends a `StdinOnce` container's input), the terminal in raw
 * mode while a TTY container has it, and the detach keys (on a TTY) ending the session while
 * the container keeps running.
 */
import type { Duplex, Readable } from "node:stream";
import type { Connection } from "../connection.js";
import { DEFAULT_DETACH_KEYS, DetachMatcher, parseDetachKeys } from "./detach-keys.js";
import { copyTo, processSinks } from "./output.js";
import { demultiplex } from "./stdcopy.js";

export interface AttachOptions {
  tty: boolean;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  /** Also sent to the daemon, which watches for them itself without a TTY. */
  detachKeys?: string;
  /** Replay what the container wrote before (`logs=1`). */
  logs?: boolean;
}

export type AttachEnd = "done" | "detached";

export class AttachSession {
  private restoreTerminal: () => void = () => undefined;
  private stopInput: () => void = () => undefined;

  private constructor(
    private readonly stream: Readable,
    private readonly socket: Duplex,
    private readonly opts: AttachOptions,
    private readonly warn: (text: string) => void,
  ) {}

  static async open(conn: Connection, id: string, opts: AttachOptions, warn: (text: string) => void): Promise<AttachSession> {
    const { stream, socket } = await conn.hijack("POST", `/containers/${encodeURIComponent(id)}/attach`, {
      query: { stream: true, stdin: opts.stdin || undefined, stdout: opts.stdout || undefined, stderr: opts.stderr || undefined, logs: opts.logs || undefined, detachKeys: opts.detachKeys || undefined },
    });
    return new AttachSession(stream, socket, opts, warn);
  }

  /**
   * Starts an exec attached (`POST /exec/{id}/start`, upgraded): the same streams as a
   * container's attach; `consoleSize` ([rows, columns]) is the TTY's first size.
   */
  static async startExec(conn: Connection, execId: string, opts: AttachOptions & { consoleSize?: [number, number] }, warn: (text: string) => void): Promise<AttachSession> {
    const json = { Detach: false, Tty: opts.tty, ...(opts.consoleSize ? { ConsoleSize: opts.consoleSize } : {}) };
    const { stream, socket } = await conn.hijack("POST", `/exec/${encodeURIComponent(execId)}/start`, { json });
    return new AttachSession(stream, socket, opts, warn);
  }

  /** Streams until the output ends (or, with no output, the input), or the user detaches. */
  run(): Promise<AttachEnd> {
    return new Promise<AttachEnd>((resolve, reject) => {
      let settled = false;
      const finish = (end: AttachEnd | Error) => {
        if (settled) return;
        settled = true;
        this.stopInput();
        this.restoreTerminal();
        if (end instanceof Error) reject(end);
        else resolve(end);
      };
      const hasOutput = this.opts.stdout || this.opts.stderr;
      if (hasOutput) {
        const drop = () => undefined;
        const copying = this.opts.tty
          ? copyTo(this.stream, processSinks.stdout)
          : demultiplex(this.stream, { stdout: this.opts.stdout ? processSinks.stdout : drop, stderr: this.opts.stderr ? processSinks.stderr : drop });
        copying.then(() => finish("done"), (e: Error) => finish(e));
      } else {
        this.stream.resume();
      }
      if (this.opts.stdin) this.startInput((end) => (end === "detached" || !hasOutput ? finish(end) : undefined));
    });
  }

  private startInput(ended: (end: AttachEnd) => void): void {
    const stdin = process.stdin;
    if (this.opts.tty && stdin.isTTY) {
      stdin.setRawMode(true);
      // libuv's raw mode keeps output processing (a "\n" shown as "\r\n"); the container's
      // terminal has done that already, so it is turned off as the Docker CLI's raw mode does.
      setOutputProcessing(false);
      let restored = false;
      this.restoreTerminal = () => {
        if (restored) return;
        restored = true;
        setOutputProcessing(true);
        stdin.setRawMode(false);
      };
    }
    // Detach keys are the client's to catch on a TTY; without one the daemon watches for them.
    let matcher: DetachMatcher | undefined;
    if (this.opts.tty) {
      let keys: Buffer = DEFAULT_DETACH_KEYS;
      if (this.opts.detachKeys) {
        try {
          keys = parseDetachKeys(this.opts.detachKeys);
        } catch (e) {
          this.warn(`invalid detach escape keys, using default: ${(e as Error).message}\n`);
        }
      }
      matcher = new DetachMatcher(keys);
    }
    const onData = (chunk: Buffer) => {
      if (!matcher) {
        this.socket.write(chunk);
        return;
      }
      const { pass, detach } = matcher.feed(chunk);
      if (pass.length) this.socket.write(pass);
      if (detach) ended("detached");
    };
    const onEnd = () => {
      this.socket.end();
      ended("done");
    };
    stdin.on("data", onData);
    stdin.once("end", onEnd);
    this.stopInput = () => {
      stdin.off("data", onData);
      stdin.off("end", onEnd);
      stdin.pause();
    };
  }

  /** Ends the connection (the container keeps running). */
  close(): void {
    this.stopInput();
    this.restoreTerminal();
    this.socket.destroy();
  }
}

/**
 * `stty opost` / `stty -opost` on the terminal that is stdin (Node has no call for it).
 * child_process is loaded here, for a terminal only: every `engine run` would pay for it.
 */
function setOutputProcessing(on: boolean): void {
  process.getBuiltinModule("node:child_process").spawnSync("stty", [on ? "opost" : "-opost"], { stdio: ["inherit", "ignore", "ignore"] });
}
