/**
 * What a client that comes with its token gets: the transport its upgrade asks for (a
 * WebSocket, `Upgrade: websocket`; SPDY/3.1, `Upgrade: SPDY/3.1`), then the session of its
 * ticket over it (exec-session.ts, attach-session.ts, port-forward.ts).
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import type { RuntimeDriver } from "../../../core/contracts/runtime.js";
import { errors } from "../../../core/errors.js";
import type { CriContainerService } from "../containers/container-service.js";
import type { SandboxService } from "../sandbox/sandbox-service.js";
import { runAttachSession } from "./attach-session.js";
import { runExecSession } from "./exec-session.js";
import { spdyCommandChannels } from "./spdy-remote-command.js";
import { internalErrorStatus, type SessionChannels } from "./session-channels.js";
import type { StreamHandler } from "./stream-server.js";
import type { PortForwardTicket, StreamTicket } from "./stream-tokens.js";
import { PORT_FORWARD_PROTOCOL, portForwardEvents } from "./spdy-port-forward.js";
import { SpdySession } from "./spdy/spdy-session.js";
import { negotiateSpdy, upgradeToSpdy } from "./spdy/spdy-upgrade.js";
import { acceptWebSocket, requestedProtocols } from "./ws-channels.js";
import { wsPortForward } from "./ws-port-forward.js";
import { SPDY_TUNNEL_PREFIX, tunnelStream } from "./ws-tunnel.js";
import { wsCommandChannels, wsCommandProtocol } from "./ws-remote-command.js";

export interface StreamSessionDeps {
  containers: CriContainerService;
  sandboxes: SandboxService;
  runtime: RuntimeDriver;
  log: Logger;
}

/** `Connection: upgrade` (among others) with `Upgrade: websocket`, as wsstream.IsWebSocketRequest. */
export function isWebSocket(req: IncomingMessage): boolean {
  return (req.headers.upgrade ?? "").toLowerCase() === "websocket" && /(^|,)\s*upgrade\s*(,|$)/i.test(req.headers.connection ?? "");
}

export function isSpdy(req: IncomingMessage): boolean {
  return (req.headers.upgrade ?? "").toLowerCase() === "spdy/3.1" && /(^|,)\s*upgrade\s*(,|$)/i.test(req.headers.connection ?? "");
}

/** The channels of an exec or attach session, over the transport the client asked for. */
async function commandChannels(req: IncomingMessage, socket: Duplex, head: Buffer, ticket: Extract<StreamTicket, { kind: "exec" | "attach" }>): Promise<SessionChannels | undefined> {
  const opts = { stdin: ticket.stdin, stdout: ticket.stdout, stderr: ticket.stderr, tty: ticket.tty };
  if (isWebSocket(req)) return wsCommandChannels(req, socket, head, wsCommandProtocol(req), opts);
  if (isSpdy(req)) return spdyCommandChannels(req, socket, head, opts);
  throw errors.criStreamUpgrade("missing upgrade headers in request");
}

/** Port-forward: SPDY, SPDY tunneled in a WebSocket (kubectl's), or the kubelet's WebSocket channels. */
async function portForward(deps: StreamSessionDeps, ticket: PortForwardTicket, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
  const pod = deps.sandboxes.get(ticket.sandboxId);
  let session: SpdySession | undefined;
  const events = portForwardEvents(pod, () => session!);
  if (isSpdy(req)) {
    const protocol = negotiateSpdy(req, socket, [PORT_FORWARD_PROTOCOL]);
    if (protocol) session = upgradeToSpdy(socket, head, protocol, events);
    return;
  }
  if (!isWebSocket(req)) throw errors.criStreamUpgrade("missing upgrade headers in request");
  const requested = requestedProtocols(req);
  const tunnel = requested.find((p) => p === SPDY_TUNNEL_PREFIX + PORT_FORWARD_PROTOCOL);
  if (tunnel) {
    session = new SpdySession(tunnelStream(await acceptWebSocket(req, socket, head, tunnel)), events);
    return;
  }
  return wsPortForward(req, socket, head, pod, ticket.ports);
}

export function streamSessions(deps: StreamSessionDeps): StreamHandler {
  const supervisor = () => deps.containers.link.client();
  return async (ticket, req, socket, head) => {
    if (ticket.kind === "exec") {
      const channels = await commandChannels(req, socket, head, ticket);
      if (!channels) return;
      let target;
      try {
        target = deps.containers.execTarget(ticket.containerId);
      } catch (err) {
        return channels.finish(internalErrorStatus((err as Error).message));
      }
      return runExecSession({ supervisor, runtime: deps.runtime, log: deps.log }, target, ticket, channels).catch((err: Error) => channels.finish(internalErrorStatus(err.message)));
    }
    if (ticket.kind === "attach") {
      const channels = await commandChannels(req, socket, head, ticket);
      if (!channels) return;
      return runAttachSession(await supervisor(), ticket.containerId, channels, deps.log).catch((err: Error) => channels.finish(internalErrorStatus(err.message)));
    }
    return portForward(deps, ticket, req, socket, head);
  };
}
