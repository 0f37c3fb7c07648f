/**
 * The log-driver contract: where a container's output goes, and how it is read back.
 *
 * Vocabulary
 * - log driver: one per driver name in a daemon (`json-file`, `local`, `syslog`...). It checks
 *   options and makes one logger per container; it keeps no per-container state itself.
 * - logger (LogWriter): made per container when it starts (`createLogger(ctx)`); the
 *   supervisor drains the container's output into it, one message per line, and closes it
 *   when the container's output ends (exit, or the container is removed).
 * - message: one line of output with its stream (`stdout`/`stderr`) and time. `line` carries
 *   the text without its trailing newline. A partial message (`partial: true`) is a piece of a
 *   line that had no newline yet (a long line split by the reader of the pipe, or output that
 *   ended without one); the driver keeps it without a newline so that readers can join pieces.
 * - log options (`--log-opt`, a container's `HostConfig.LogConfig.Config`): plain names in the
 *   driver's own vocabulary (`max-size`, `labels`), not namespaced. The driver validates them:
 *   an unknown or invalid one is an error that names it. `validateOptions` (container create)
 *   refuses at least an unknown name; a value may be checked only by `createLogger` (start), as
 *   Docker checks json-file's `max-size`. A driver that keeps nothing may take any option
 *   unchecked (Docker's `none` does). The daemon merges its defaults under a container's own
 *   options before `validateOptions` and `createLogger`.
 * - attrs: extra key/value pairs the options select from the container's labels and
 *   environment (`labels`, `labels-regex`, `env`, `env-regex`, `tag`), stored with each message
 *   by drivers that can.
 *
 * Lifecycle of a logger
 *   validateOptions(options) (at container create and at daemon start for the defaults) ->
 *   createLogger(ctx) (container start) -> write(msg)* (in order; a driver may queue, and the
 *   promise it returns settles when the message is stored) -> close() (flushes and releases
 *   files; `closed` settles then). write after close is an error. A new logger for the same
 *   container (restart) appends to what earlier loggers wrote.
 *
 * Exactly once across a crash of the caller (optional, `mark`): the supervisor drains a
 * container's spool into a logger and may be killed at any moment. A logger that can say where
 * what it stored ends (`mark()`, a small JSON value) lets the caller save that mark together with
 * its own progress. Made again after a crash with `resume.mark`, the logger finds how many
 * messages it stored after that mark (`storedAfterMark`), and the caller skips that many from its
 * saved progress: none is lost, none stored twice. A step the mark cannot describe (a rotation)
 * is fenced by `resume.checkpoint`, which the logger awaits before and after the step so that the
 * caller saves a fresh mark on each side. A logger without `mark` is delivered at least once.
 *
 * Optional abilities are declared in `capabilities`, never guessed: `read` means the driver
 * can read back what it stored (`createReader`), which `docker logs` needs. A driver without
 * `read` is read through the daemon's local cache (dual logging, the `cache-*` options).
 *
 * Reading (capability `read`): `createReader(ctx).read(opts)` is an async iterable of the
 * messages stored, oldest first. With `follow` it goes on with messages written later until
 * `opts.signal` aborts (the iteration just ends) or `opts.producerDone` settles (the reader
 * drains what is still stored, then ends). Breaking out of the loop also releases it.
 *
 * Conformance: `logConformance(name, makeDriver, abilities)` (test/log-conformance.ts) tests
 * these rules against a driver, built-in or a third party's.
 */

export type LogStream = "stdout" | "stderr";

/** What a logger is made with: one container, seen once at start. */
export interface LoggerContext {
  /** Full 64-hex container id. */
  containerId: string;
  /** The container's name; a leading `/` is allowed and ignored. */
  containerName: string;
  /** The image as the user named it (`alpine:3.20`). */
  imageName: string;
  /** The image id (`sha256:...`). */
  imageId: string;
  labels: Record<string, string>;
  /** The container's environment, `KEY=VALUE` entries. */
  env: string[];
  /** `<data-root>/containers/<id>`: the container's folder; drivers that keep files keep them here. */
  logDir: string;
  /** The log options in effect (daemon defaults merged under the container's own). */
  options: Record<string, string>;
}

export interface LogMessageIn {
  /** The line without its trailing newline. */
  line: Buffer;
  stream: LogStream;
  time: Date;
  /**
   * The time in nanoseconds since the epoch, when the caller has it more exactly than `time`
   * (which keeps milliseconds only). When set it wins over `time`.
   */
  timeNs?: bigint;
  /** A piece of a line with no newline yet. */
  partial?: boolean;
}

export interface LogWriter {
  /**
   * Stores one message. Messages are stored in the order of the calls, which need not wait for
   * each other; a driver may store several in one go (they may share the promise).
   */
  write(msg: LogMessageIn): void | Promise<void>;
  /** Where the stored messages end (after the writes that settled): JSON for `LogResume.mark`. */
  mark?(): LogMark;
  /** Made with `resume.mark`: how many messages were found stored after it. */
  readonly storedAfterMark?: number;
  /** Flushes and releases the logger; safe to call twice. */
  close(): Promise<void>;
  /** Settles when `close()` has finished: pass it as a reader's `producerDone`. */
  readonly closed: Promise<void>;
}

/** A logger's own description of where its stored messages end (see `LogWriter.mark`). */
export type LogMark = Record<string, unknown>;

/** What the caller gives a logger it makes again after a crash, for exactly-once delivery. */
export interface LogResume {
  /** The mark saved with the caller's progress; none on a first start. */
  mark?: LogMark;
  /**
   * Awaited by the logger before and after a step that a mark cannot undo (a rotation), with
   * the count of messages this logger has stored so far: the caller saves its progress at that
   * message with a fresh `mark()`. Bound by the caller after the logger is made; may be absent.
   */
  checkpoint?(stored: number): Promise<void>;
}

/** One message as read back. */
export interface LogMessage {
  /** The line without its newline. */
  line: Buffer;
  stream: LogStream;
  time: Date;
  /** The stored time in nanoseconds since the epoch (`time` keeps only milliseconds). */
  timeNs: bigint;
  /** Stored without a newline: a piece of a line. */
  partial: boolean;
  attrs?: Record<string, string>;
}

export interface ReadOptions {
  /** Go on with messages written after the read started (`docker logs -f`). */
  follow: boolean;
  /** Only messages at or after this time. */
  since?: Date;
  /** Only messages at or before this time; a follow ends once the clock passes it. */
  until?: Date;
  /**
   * `since` and `until` to the nanosecond, when the client gave them so (Docker's
   * `seconds.nanoseconds`): a Date keeps milliseconds, and a message stamped within the
   * millisecond of `until` is still at or before it. Readers that store nanoseconds use them.
   */
  sinceNs?: bigint;
  untilNs?: bigint;
  /**
   * Only the last `tail` stored messages (before `since`/`until` and stream selection, as
   * Docker counts them); `undefined` is all (Docker's `"all"`), 0 is none.
   */
  tail?: number;
  stdout: boolean;
  stderr: boolean;
  /**
   * Accepted for the API's sake; every message carries its time and formatting timestamps
   * into the output is the caller's job.
   */
  timestamps?: boolean;
  /** Ends the iteration (without an error) when aborted, following or not. */
  signal?: AbortSignal;
  /**
   * For `follow`: settles when the producer has finished (the logger's `closed`, or the
   * container's exit as the daemon learns it). The reader then reads what is still stored and
   * ends. Without it a follow ends only on `signal` (or `until`).
   */
  producerDone?: PromiseLike<unknown>;
}

export interface LogReader {
  read(opts: ReadOptions): AsyncIterable<LogMessage>;
}

export type LogCapability = "read";

export interface LogDriver {
  /** The name operators select it by (`json-file`). */
  readonly name: string;
  readonly capabilities: readonly LogCapability[];
  /** Throws an Error naming the first unknown option, or a bad value it checks this early (see the header). */
  validateOptions(options: Record<string, string>): void;
  /** Makes the logger of one container; validates `ctx.options` first. `resume`: see `LogWriter.mark`. */
  createLogger(ctx: LoggerContext, resume?: LogResume): LogWriter | Promise<LogWriter>;
  /** Present exactly when `capabilities` has `read`. */
  createReader?(ctx: LoggerContext): LogReader;
}

/** What the daemon gives a log plugin's factory (once per driver name). */
export interface LogDriverContext {
  dataRoot: string;
  /** The daemon's default log options (`--log-opt`), to validate at start. */
  defaults: Record<string, string>;
}
