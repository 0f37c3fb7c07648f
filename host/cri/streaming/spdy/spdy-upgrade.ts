/**
 * The HTTP upgrade to SPDY/3.1 as k8s.io/apimachinery's httpstream does it: the protocol is
 * negotiated first (`X-Stream-Protocol-Version`, one header per protocol the client speaks, in
 * its order of preference: the first the server serves wins; none given is 400, none in common
 * 403 with the server's list in `X-Accepted-Stream-Protocol-Versions`), then `101 Switching
 * Protocols` with `Upgrade: SPDY/3.1` and the protocol chosen, and the session starts on the
 * connection.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { errors } from "../../../../core/errors.js";
import { markUpgraded, refuseUpgrade } from "../stream-server.js";
import { SpdySession, type SpdySessionEvents } from "./spdy-session.js";

/** The client's protocols, in its order (repeated headers arrive joined by commas). */
export function clientProtocols(req: IncomingMessage): string[] {
  const raw = req.headers["x-stream-protocol-version"];
  return (Array.isArray(raw) ? raw.join(",") : (raw ?? "")).split(",").map((p) => p.trim()).filter(Boolean);
}

/**
 * The protocol both speak, or the refusal already written on the socket (undefined): the
 * caller then stops.
 */
export function negotiateSpdy(req: IncomingMessage, socket: Duplex, served: readonly string[]): string | undefined {
  const asked = clientProtocols(req);
  if (asked.length === 0) {
    refuseUpgrade(socket, errors.criStreamUpgrade("X-Stream-Protocol-Version is required"));
    return undefined;
  }
  const chosen = asked.find((p) => served.includes(p));
  if (!chosen) {
    refuseUpgrade(socket, errors.criStreamProtocol(asked.join(" "), served.join(" ")), { "X-Accepted-Stream-Protocol-Versions": served.join(", ") });
    return undefined;
  }
  return chosen;
}

/** Answers 101 with `protocol` and starts the session (`head`: bytes that came with the request). */
export function upgradeToSpdy(socket: Duplex, head: Buffer, protocol: string, events: SpdySessionEvents): SpdySession {
  markUpgraded(socket);
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${protocol}\r\n\r\n`);
  return new SpdySession(socket, events, head);
}
