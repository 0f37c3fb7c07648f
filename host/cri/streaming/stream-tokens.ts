/**
 * The requests that Exec, Attach and PortForward checked, each kept under a random token until
 * its client comes to the streaming server, as the kubelet's `streaming.requestCache` keeps
 * them: single-use (taking one removes it), valid for a minute, at most MAX_WAITING at a time
 * (a kubelet that asks and never connects cannot fill memory). A token used twice or late is
 * simply not there: the server answers 404.
 */
import { randomBytes } from "node:crypto";
import { errors } from "../../../core/errors.js";

export const TOKEN_TTL_MS = 60_000;
export const MAX_WAITING = 1000;

export interface ExecTicket {
  kind: "exec";
  containerId: string;
  cmd: string[];
  tty: boolean;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
}

export interface AttachTicket {
  kind: "attach";
  containerId: string;
  tty: boolean;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
}

export interface PortForwardTicket {
  kind: "portforward";
  sandboxId: string;
  /** The ports asked for (the client may still name others in its streams, as the kubelet allows). */
  ports: number[];
}

export type StreamTicket = ExecTicket | AttachTicket | PortForwardTicket;

export class StreamTokens {
  private readonly waiting = new Map<string, { ticket: StreamTicket; expires: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Stores the request; answers its token (URL-safe, 8 random bytes as the kubelet's). */
  put(ticket: StreamTicket): string {
    this.sweep();
    if (this.waiting.size >= MAX_WAITING) throw errors.criStreamLimit(MAX_WAITING);
    let token: string;
    do token = randomBytes(8).toString("base64url");
    while (this.waiting.has(token));
    this.waiting.set(token, { ticket, expires: this.now() + TOKEN_TTL_MS });
    return token;
  }

  /** The request of `token` for a session of `kind`, removed; undefined when unknown, used or expired. */
  take(token: string, kind: StreamTicket["kind"]): StreamTicket | undefined {
    const entry = this.waiting.get(token);
    if (!entry || entry.ticket.kind !== kind) return undefined;
    this.waiting.delete(token);
    return entry.expires > this.now() ? entry.ticket : undefined;
  }

  get size(): number {
    this.sweep();
    return this.waiting.size;
  }

  private sweep(): void {
    const now = this.now();
    for (const [token, entry] of this.waiting) if (entry.expires <= now) this.waiting.delete(token);
  }
}
