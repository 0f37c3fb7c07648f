/**
 * Kubernetes' channel protocols over a WebSocket (k8s.io/apimachinery wsstream): each message
 * starts with its channel, a byte (`channel.k8s.io` and the versioned `vN.channel.k8s.io`) or
 * an ASCII digit before base64 data (`base64.channel.k8s.io`, text messages). The subprotocol
 * is the client's first that the server accepts; a client that names none gets the binary form;
 * one whose protocols are all unknown is refused (403), as x/net/websocket refuses it.
 *
 * The `ws` package is loaded here, on the first WebSocket session, not with the daemon.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { WebSocket } from "ws";
import { markUpgraded } from "./stream-server.js";

export interface ChannelProtocol {
  /** Binary messages with a channel byte, or text: a digit and base64. */
  binary: boolean;
}

export interface ChannelSocket {
  ws: WebSocket;
  /** The negotiated subprotocol ("" when the client named none). */
  protocol: string;
  /** Sends `data` on `channel`; resolves once the socket has taken it. */
  send(channel: number, data: Buffer): Promise<void>;
  /** Called with each message's channel and data (decoded). */
  onMessage(listener: (channel: number, data: Buffer) => void): void;
  /** A normal closure (1000): the client reads it as the end of every channel. */
  close(): void;
}

let wsModule: Promise<typeof import("ws")> | undefined;

/** The client's `Sec-WebSocket-Protocol` values, in its order. */
export function requestedProtocols(req: IncomingMessage): string[] {
  return (req.headers["sec-websocket-protocol"] ?? "").split(",").map((p) => p.trim()).filter(Boolean);
}

/** The protocol to use: the client's first one we accept; "" when it named none; undefined when none fits. */
export function chooseProtocol(requested: string[], accepted: Record<string, unknown>): string | undefined {
  if (requested.length === 0) return "" in accepted ? "" : undefined;
  return requested.find((p) => p in accepted);
}

/** Completes the WebSocket upgrade, answering `protocol` ("": none). */
export async function acceptWebSocket(req: IncomingMessage, socket: Duplex, head: Buffer, protocol: string): Promise<WebSocket> {
  wsModule ??= import("ws");
  const { WebSocketServer } = await wsModule;
  // A server of the session's own, listening nowhere: it only completes this upgrade. The
  // protocol is answered here rather than by `ws`, which refuses names that are not HTTP
  // tokens, and kubectl's `SPDY/3.1+portforward.k8s.io` has a "/".
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 64 * 1024 * 1024 });
  delete req.headers["sec-websocket-protocol"];
  if (protocol) wss.on("headers", (headers: string[]) => headers.push(`Sec-WebSocket-Protocol: ${protocol}`));
  markUpgraded(socket);
  return new Promise<WebSocket>((resolve) => wss.handleUpgrade(req, socket, head, resolve));
}

/** Completes the upgrade with `protocol` (already chosen by chooseProtocol). */
export async function acceptChannels(req: IncomingMessage, socket: Duplex, head: Buffer, protocol: string, form: ChannelProtocol): Promise<ChannelSocket> {
  const ws = await acceptWebSocket(req, socket, head, protocol);
  return {
    ws,
    protocol,
    send: (channel, data) =>
      new Promise<void>((resolve) => {
        if (ws.readyState !== ws.OPEN) return resolve();
        const message = form.binary ? Buffer.concat([Buffer.from([channel]), data]) : String.fromCharCode(48 + channel) + data.toString("base64");
        ws.send(message, { binary: form.binary }, () => resolve());
      }),
    onMessage(listener) {
      ws.on("message", (raw: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => {
        const data = Array.isArray(raw) ? Buffer.concat(raw) : Buffer.from(raw as Buffer);
        if (data.length === 0) return;
        if (form.binary || isBinary) return listener(data[0], data.subarray(1));
        listener(data[0] - 48, Buffer.from(data.subarray(1).toString("latin1"), "base64"));
      });
    },
    close() {
      if (ws.readyState === ws.OPEN) ws.close(1000);
    },
  };
}
