/**
 * Port-forward over WebSocket channels, the kubelet's form (`v4.channel.k8s.io`,
 * `v4.base64.channel.k8s.io`, or none): two channels per port of the request, in its order,
 * data (2i, both ways) and error (2i+1, to the client); each starts with the port, 16 bits
 * little endian. One connection per port is made to the pod's `localhost:<port>` at once and
 * copied both ways; the session ends when every connection has.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { errors } from "../../../core/errors.js";
import type { SandboxRecord } from "../sandbox/sandbox-service.js";
import { connectPodPort } from "./port-forward.js";
import { acceptChannels, chooseProtocol, requestedProtocols, type ChannelProtocol } from "./ws-channels.js";

const PROTOCOLS: Record<string, ChannelProtocol> = {
  "": { binary: true },
  "portforward.k8s.io": { binary: true },
  "v4.channel.k8s.io": { binary: true },
  "v4.base64.channel.k8s.io": { binary: false },
};

export async function wsPortForward(req: IncomingMessage, socket: Duplex, head: Buffer, pod: SandboxRecord, ports: number[]): Promise<void> {
  const requested = requestedProtocols(req);
  const protocol = chooseProtocol(requested, PROTOCOLS);
  if (protocol === undefined) throw errors.criStreamProtocol(requested.join(" "), Object.keys(PROTOCOLS).filter(Boolean).join(" "));
  const ch = await acceptChannels(req, socket, head, protocol, PROTOCOLS[protocol]);
  const conns = ports.map((port) => connectPodPort(pod, port));
  ch.onMessage((channel, data) => {
    if (channel % 2 === 0 && conns[channel / 2]) conns[channel / 2].connection.write(data);
  });
  ch.ws.on("close", () => conns.forEach((c) => c.close()));
  ch.ws.on("error", () => {});
  await Promise.all(
    ports.map(async (port, i) => {
      const portBytes = Buffer.alloc(2);
      portBytes.writeUInt16LE(port);
      await ch.send(2 * i, portBytes);
      await ch.send(2 * i + 1, portBytes);
      const c = conns[i];
      c.connection.on("error", () => {});
      c.connection.on("data", (chunk: Buffer) => {
        c.connection.pause();
        void ch.send(2 * i, chunk).finally(() => c.connection.resume());
      });
      const [why] = await Promise.all([c.failed, new Promise((resolve) => c.connection.once("end", resolve).once("close", resolve))]);
      if (why) await ch.send(2 * i + 1, Buffer.from(errors.criPortForward(port, pod.id, why).message));
    }),
  );
  ch.close();
}
