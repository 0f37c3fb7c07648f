/**
 * Renders the daemon's JSON-lines progress stream (pull, push, import, load) as the Docker CLI
 * does. On a terminal every layer keeps one line, rewritten in place (cursor up, erase the line,
 * write, cursor down) with a bar and counts; anything without progress ends that group of lines.
 * Without a terminal only the messages without byte counts are printed, one line each: status
 * changes ("Pulling fs layer", "Pull complete"), never the byte-by-byte updates.
 * An error line ends the stream: its errorDetail message is thrown, with its code (a build's
 * failed RUN gives the command's exit status there). `aux` messages go to `out.aux` (a build's
 * image ID), never to the screen.
 */
import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { goDuration, humanSize } from "./human-size.js";

interface ProgressDetail {
  current?: number;
  total?: number;
  start?: number;
  hidecounts?: boolean;
  units?: string;
}

interface JsonMessage {
  stream?: string;
  status?: string;
  progressDetail?: ProgressDetail;
  progress?: string;
  id?: string;
  from?: string;
  time?: number;
  timeNano?: number;
  errorDetail?: { code?: number; message?: string };
  error?: string;
  aux?: unknown;
}

/** An error message of the stream; `detailCode` is its `errorDetail.code`, when it has one. */
export class StreamMessageError extends Error {
  constructor(
    message: string,
    readonly detailCode?: number,
  ) {
    super(message);
  }
}

export interface ProgressSink {
  stdout(text: string): void;
  isTTY: boolean;
  aux?(value: unknown): void;
}

const ESC = "\x1b[";
const up = (n: number) => (n > 0 ? `${ESC}${n}A` : "");
const down = (n: number) => (n > 0 ? `${ESC}${n}B` : "");
const ERASE_LINE = `${ESC}2K`;

/** The bar and counts after a status (JSONProgress.String); "" when there is nothing to count. */
export function progressText(p: ProgressDetail, width: number, now = Date.now()): string {
  const current = p.current ?? 0;
  const total = p.total ?? 0;
  if (current <= 0 && total <= 0) return "";
  if (total <= 0) return p.units ? `${current} ${p.units}` : humanSize(current).padStart(8);
  const percentage = Math.min(50, Math.trunc(Math.trunc((current / total) * 100) / 2));
  const bar = width > 110 ? `[${"=".repeat(percentage)}>${" ".repeat(Math.max(0, 50 - percentage))}] ` : "";
  let numbers = "";
  if (!p.hidecounts) {
    if (!p.units) numbers = current > total ? humanSize(current).padStart(8) : `${humanSize(current).padStart(8)}/${humanSize(total)}`;
    else numbers = current > total ? `${current} ${p.units}` : `${current}/${total} ${p.units}`;
  }
  let left = "";
  if (current > 0 && p.start && p.start > 0 && percentage < 50 && width > 50) {
    const elapsed = now / 1000 - p.start;
    left = ` ${goDuration(((total - current) * elapsed) / current)}`;
  }
  return bar + numbers + left;
}

/** RFC3339 with nanoseconds always 9 digits, as the CLI prints a message's time. */
function timestamp(m: JsonMessage): string {
  if (m.timeNano) {
    const ns = BigInt(m.timeNano);
    const iso = new Date(Number(ns / 1_000_000n)).toISOString().slice(0, 19);
    return `${iso}.${String(ns % 1_000_000_000n).padStart(9, "0")}Z `;
  }
  if (m.time) return `${new Date(m.time * 1000).toISOString().slice(0, 19)}.000000000Z `;
  return "";
}

/** One message's text, or undefined for a progress update that a non-terminal skips. */
function display(m: JsonMessage, tty: boolean, width: number): string | undefined {
  let text = "";
  let endl = "";
  if (tty && !m.stream && m.progressDetail) {
    text += `${ERASE_LINE}\r`;
    endl = "\r";
  } else if (m.progressDetail && progressText(m.progressDetail, width) !== "") {
    return undefined;
  }
  text += timestamp(m);
  if (m.id) text += `${m.id}: `;
  if (m.from) text += `(from ${m.from}) `;
  const status = m.status ?? "";
  if (m.progressDetail && tty) text += `${status} ${progressText(m.progressDetail, width)}${endl}`;
  else if (m.progress) text += `${status} ${m.progress}${endl}`;
  else if (m.stream) text += `${m.stream}${endl}`;
  else text += `${status}${endl}\n`;
  return text;
}

export async function showProgress(body: Readable, out: ProgressSink): Promise<void> {
  const tty = out.isTTY;
  const width = (tty && process.stdout.columns) || 200;
  // Line of each layer id, counted from the first of the current group.
  let lines = new Map<string, number>();
  const handle = (m: JsonMessage) => {
    if (m.aux !== undefined) {
      out.aux?.(m.aux);
      return;
    }
    let text = "";
    let diff = 0;
    if (m.id && (m.progressDetail || m.progress)) {
      let line = lines.get(m.id);
      if (line === undefined) {
        line = lines.size;
        lines.set(m.id, line);
        if (tty) text += "\n";
      }
      diff = lines.size - line;
      if (tty) text += up(diff);
    } else {
      // a message of its own ends the group: later updates of earlier ids start new lines
      lines = new Map();
    }
    const error = m.errorDetail ? (m.errorDetail.message ?? "") : m.error;
    if (error !== undefined) {
      if (tty && m.id) text += down(diff);
      if (text) out.stdout(text);
      throw new StreamMessageError(error, m.errorDetail?.code);
    }
    text += display(m, tty, width) ?? "";
    if (tty && m.id) text += down(diff);
    if (text) out.stdout(text);
  };

  const decoder = new StringDecoder("utf8");
  let pending = "";
  const take = (final: boolean) => {
    const parts = pending.split("\n");
    pending = final ? "" : parts.pop()!;
    for (const part of parts) {
      if (part.trim() === "") continue;
      let message: JsonMessage;
      try {
        message = JSON.parse(part) as JsonMessage;
      } catch {
        throw new Error(`invalid character in the daemon's progress stream: ${part.slice(0, 80)}`);
      }
      handle(message);
    }
  };
  for await (const chunk of body) {
    pending += typeof chunk === "string" ? chunk : decoder.write(chunk as Buffer);
    take(false);
  }
  pending += decoder.end();
  take(true);
}
