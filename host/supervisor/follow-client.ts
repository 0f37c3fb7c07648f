/**
 * engined's side of a follower of a container's spool (spool-followers.ts): a connection of its
 * own to the supervisor (`POST .../follow`), outside the client's pool, that lasts as long as
 * the follower reads. The request's body carries, a line each, the inode of the spool file the
 * follower reads: at once when it moves on to the next file (the supervisor then lets go of the
 * one it finished), and once a second besides, so that the supervisor sees the follower alive.
 *
 * A connection that ends while the follower reads (the supervisor ended and a new one was
 * started, or it dropped a follower silent too long) is made again, with the file it reads.
 */
import type { ClientRequest } from "node:http";
import { http } from "../../core/node-http.js";

const BEAT_MS = 1000;
const RECONNECT_MS = 1000;

class FollowRefused extends Error {}

export class SpoolFollowReport {
  private ino?: number;
  private req?: ClientRequest;
  private closed = false;
  private beat?: NodeJS.Timeout;
  private retry?: NodeJS.Timeout;

  constructor(
    private readonly socket: string,
    private readonly id: string,
  ) {}

  /** Resolves once the supervisor keeps the spool's files for this follower; rejects when it refuses, or cannot be reached. */
  start(): Promise<void> {
    return this.connect();
  }

  /** The follower reads the spool file of this inode now. */
  report(ino: number): void {
    if (ino === this.ino) return;
    this.ino = ino;
    this.send();
  }

  /** The follower is done: the supervisor keeps nothing more for it. */
  close(): void {
    this.closed = true;
    clearInterval(this.beat);
    clearTimeout(this.retry);
    this.req?.destroy();
    this.req = undefined;
  }

  private send(): void {
    this.req?.write(`${this.ino ?? ""}\n`);
  }

  private connect(): Promise<void> {
    return new Promise((resolve, reject) => {
      const query = this.ino === undefined ? "" : `?ino=${this.ino}`;
      const req = http.request({ socketPath: this.socket, method: "POST", path: `/v1/containers/${encodeURIComponent(this.id)}/follow${query}`, agent: false, headers: { "content-type": "text/plain" } });
      this.req = req;
      let answered = false;
      let over = false;
      // Once, for an error and the close after it; a refusal has answered already.
      const ended = (err?: Error) => {
        if (over) return;
        over = true;
        if (this.req === req) this.req = undefined;
        if (!answered) reject(err ?? new Error("the supervisor closed the follow request"));
        else this.later();
      };
      req.once("error", (err) => ended(err));
      req.once("close", () => ended());
      req.once("response", (res) => {
        res.resume();
        if (res.statusCode !== 200) {
          over = true;
          this.req = undefined;
          req.destroy();
          return reject(new FollowRefused(`the supervisor refused the follower (${res.statusCode})`));
        }
        answered = true;
        this.beat ??= setInterval(() => this.send(), BEAT_MS).unref();
        resolve();
      });
      req.flushHeaders();
    });
  }

  /** Connects again in a while (the supervisor may not be back yet), as long as the follower reads and is not refused. */
  private later(): void {
    if (this.closed) return;
    this.retry = setTimeout(() => {
      this.connect().catch((err: Error) => {
        if (!(err instanceof FollowRefused)) this.later();
      });
    }, RECONNECT_MS).unref();
  }
}
