/**
 * Load shedding, a last resort: a request gets 503 (with Retry-After, the delay seen and the
 * limit) only while the event loop is late by more than `maxEventLoopDelay`, i.e. held up for
 * seconds. No normal operation comes near: the daemon's longest stalls are under 100 ms
 * (bench/event-loop.mjs), so a valid request is turned away only when the machine or the
 * daemon is truly swamped.
 *
 * The lateness is that of a timer due every `sampleInterval`, measured when it fires. A
 * histogram of the loop's delay (what @fastify/under-pressure samples) has no sample at all
 * after one stall longer than its interval, and that plugin reads the empty histogram as an
 * infinite delay: any stall past half a second shed requests, whatever the limit said.
 */
import type { FastifyInstance } from "fastify";
import { errors } from "../../core/errors.js";

export interface LoadLimits {
  /** How late the event loop may run, in ms, before requests get 503 with Retry-After. */
  maxEventLoopDelay: number;
  /** Seconds a client is told to wait. */
  retryAfter: number;
  /** How often the event loop's lateness is measured, in ms. */
  sampleInterval: number;
}

export const DEFAULT_LOAD_LIMITS: LoadLimits = { maxEventLoopDelay: 5000, retryAfter: 10, sampleInterval: 500 };

export function installLoadShedding(app: FastifyInstance, limits: LoadLimits): void {
  let late = 0;
  let due = performance.now() + limits.sampleInterval;
  const timer = setInterval(() => {
    const now = performance.now();
    late = Math.max(0, now - due);
    due = now + limits.sampleInterval;
  }, limits.sampleInterval);
  timer.unref();
  app.addHook("onClose", async () => clearInterval(timer));
  app.addHook("onRequest", async (_request, reply) => {
    if (late <= limits.maxEventLoopDelay) return;
    reply.header("retry-after", limits.retryAfter);
    throw errors.apiUnderPressure(late, limits.maxEventLoopDelay);
  });
}
