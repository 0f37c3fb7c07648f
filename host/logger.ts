/**
 * The daemon's log, on standard error, with pino. Two formats, as operators of Docker's daemon
 * know them:
 * - json: one object a line, `{"level":"info","msg":"...","time":"<RFC 3339>"}` plus fields;
 * - text: `time="<RFC 3339>" level=info msg="..." key=value`; on a terminal without
 *   `--raw-logs`, the short coloured form `INFO[0003] ...` instead.
 * Level words follow logrus (`warning`, not `warn`), which is what log tooling for Docker
 * daemons already parses.
 */
import { pino, type DestinationStream, type Logger } from "pino";

export type LogLevel = "debug" | "info" | "warn" | "error" | "fatal";
export type LogFormat = "text" | "json";

export interface LoggerOptions {
  level: LogLevel;
  format: LogFormat;
  rawLogs: boolean;
  /** Where lines go; standard error by default. */
  write?: (line: string) => void;
  /** Whether the destination is a terminal (for the coloured short form). */
  isTTY?: boolean;
}

const WORD: Record<string, string> = { warn: "warning" };
const COLOUR: Record<string, number> = { debug: 37, info: 36, warning: 33, error: 31, fatal: 31 };
const started = Date.now();

export function createLogger(opts: LoggerOptions): Logger {
  const write = opts.write ?? ((line: string) => process.stderr.write(line));
  const colour = (opts.isTTY ?? process.stderr.isTTY) && !opts.rawLogs;
  const stream: DestinationStream = {
    write: opts.format === "json" ? write : (line: string) => write(toText(line, colour)),
  };
  return pino(
    {
      level: opts.level,
      base: undefined,
      messageKey: "msg",
      timestamp: () => `,"time":"${new Date().toISOString()}"`,
      formatters: { level: (label) => ({ level: WORD[label] ?? label }) },
    },
    stream,
  );
}

function toText(jsonLine: string, colour: boolean): string {
  const { level, time, msg, ...fields } = JSON.parse(jsonLine) as Record<string, unknown>;
  const rest = Object.entries(fields).map(([k, v]) => `${k}=${quote(v)}`);
  if (colour) {
    const secs = String(Math.floor((Date.now() - started) / 1000)).padStart(4, "0");
    const tag = String(level).toUpperCase().slice(0, 4);
    return `\x1b[${COLOUR[String(level)] ?? 0}m${tag}\x1b[0m[${secs}] ${String(msg ?? "")} ${rest.join(" ")}`.trimEnd() + "\n";
  }
  return [`time=${quote(time)}`, `level=${level}`, `msg=${quote(msg ?? "")}`, ...rest].join(" ") + "\n";
}

function quote(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  // logrus quotes any value with characters beyond these (a time's colons included).
  return /^[A-Za-z0-9\-._/@^+]+$/.test(text) ? text : JSON.stringify(text);
}
