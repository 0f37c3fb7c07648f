/**
 * The JSON progress messages of pull and push, as Docker's daemon writes them (one object per
 * line) so that Docker's CLI and SDKs render them the same: a status, an `id` (a layer's short
 * digest, or the tag), and for byte counts `progressDetail` with the `progress` bar text.
 */

import { humanSize } from "../../core/go-units.js";

export interface ProgressMessage {
  status?: string;
  progressDetail?: { current?: number; total?: number };
  progress?: string;
  id?: string;
  aux?: Record<string, unknown>;
  /** Text for the terminal (a build's output). */
  stream?: string;
  errorDetail?: { message: string; code?: number };
  error?: string;
}

export type Emit = (message: ProgressMessage) => void;

/** `[=====>      ]  1.2MB/3.4MB`: fifty steps, the numbers padded to eight columns. */
export function progressBar(current: number, total: number): string {
  if (current <= 0 && total <= 0) return "";
  if (total <= 0) return humanSize(current).padStart(8);
  const steps = Math.min(50, Math.floor(Math.floor((current / total) * 100) / 2));
  const bar = `[${"=".repeat(steps)}>${" ".repeat(Math.max(0, 50 - steps))}] `;
  const numbers = current > total ? humanSize(current).padStart(8) : `${humanSize(current).padStart(8)}/${humanSize(total)}`;
  return bar + numbers;
}

export const status = (id: string | undefined, text: string): ProgressMessage => (id === undefined ? { status: text } : { status: text, progressDetail: {}, id });

export const statusOnly = (id: string, text: string): ProgressMessage => ({ status: text, id });

export function bytesMessage(id: string, text: string, current: number, total: number): ProgressMessage {
  return { status: text, progressDetail: { current, total }, progress: progressBar(current, total), id };
}

/** Reports byte counts no more often than every 512 KiB and 100 ms, and always the last. */
export function throttled(report: (current: number) => void): (current: number, last?: boolean) => void {
  let reported = -1;
  let at = 0;
  return (current, last = false) => {
    const now = Date.now();
    if (last || (current - reported >= 512 * 1024 && now - at >= 100)) {
      reported = current;
      at = now;
      report(current);
    }
  };
}

/** A layer's short ID in messages: 12 hex digits of its digest. */
export const shortId = (digest: string) => digest.replace(/^sha256:/, "").slice(0, 12);
