/**
 * `GET /events`: the daemon's events as a stream of JSON lines. `since` replays the kept
 * history from that time, then follows; `until` ends the stream at that time (at once, with
 * the history up to it, when it has passed). Without either, only new events are sent, until
 * the client goes away. Times are Unix seconds with up to nine decimals, as the Docker CLI
 * sends them (it turns `10m` and dates into that itself).
 *
 * Events come whether a subscriber reads or not: one that does not read keeps a bounded buffer
 * (client-stream.ts), and the events that do not fit are dropped for it, as Docker's daemon
 * drops them for a subscriber whose queue stays full.
 */
import type { FastifyInstance } from "fastify";
import { eventJson, parseEventTime, type EngineEvent } from "../../../core/events/event.js";
import { eventMatches } from "../../../core/events/event-filter.js";
import { errors } from "../../../core/errors.js";
import type { EventLog } from "../../events/event-log.js";
import { queryFilters, queryString, type Query } from "../query.js";
import { rawResponse } from "../raw-response.js";
import { ClientStream } from "../client-stream.js";
import { requestedApiVersion } from "../api-version.js";
import { compareApiVersions } from "../../../core/version.js";

/** A timer cannot wait longer than this; a later `until` is waited for in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export function eventRoutes(log: EventLog) {
  return (app: FastifyInstance) => {
    app.get("/events", async (request, reply) => {
      const query = request.query as Query;
      const since = timeParam(query, "since");
      const until = timeParam(query, "until");
      if (since !== undefined && until !== undefined && until < since) throw errors.eventsSinceAfterUntil(queryString(query, "since")!, queryString(query, "until")!);
      // a key no event has is not refused, as Docker's router checks none: it selects nothing more
      const filters = queryFilters(query);
      // an image's `create` (a build step's image) is told from API 1.46, as Docker's route tells it
      const imageCreates = compareApiVersions(requestedApiVersion(request.raw), "1.46") >= 0;
      const shown = (e: EngineEvent) => imageCreates || e.Type !== "image" || e.Action !== "create";
      const wanted = (e: EngineEvent) => shown(e) && eventMatches(e, filters) && (until === undefined || e.timeNano <= until);

      const res = rawResponse(reply, 200, { "content-type": "application/json" });
      const client = new ClientStream(res);
      const write = (e: EngineEvent) => {
        if (wanted(e) && client.hasRoom) client.offer(`${eventJson(e)}\n`);
      };
      const live: EngineEvent[] = [];
      let replaying = true;
      const { past, unsubscribe } = log.subscribe(since ?? (until !== undefined ? 0n : undefined), (e) => (replaying ? live.push(e) : write(e)));
      let timer: NodeJS.Timeout | undefined;
      const finish = () => {
        unsubscribe();
        clearTimeout(timer);
        client.end();
      };
      client.signal.addEventListener("abort", finish, { once: true });
      for (const e of past) write(e);
      replaying = false;
      for (const e of live) write(e);
      if (until === undefined) return;
      const waitUntil = () => {
        const ms = Number((until - BigInt(Date.now()) * 1_000_000n) / 1_000_000n);
        if (ms <= 0) return finish();
        timer = setTimeout(waitUntil, Math.min(ms + 1, MAX_TIMER_MS));
      };
      waitUntil();
    });
  };
}

function timeParam(query: Query, name: string): bigint | undefined {
  const raw = queryString(query, name);
  if (raw === undefined || raw === "") return undefined;
  const nanos = parseEventTime(raw);
  if (nanos === undefined) throw errors.apiInvalidParameter(name, raw);
  return nanos;
}
