/**
 * An attach session: the client joins the running container's own streams through conmon's
 * attach socket (host/containers/attach-socket.ts), as `docker attach` gives it input: output
 * comes as conmon sends it to attached clients (from the moment of attaching; what came before
 * is in the log), the client's input goes to the container's stdin, its sizes to the
 * container's terminal. The session ends when conmon closes the socket (the container has
 * exited), with a Success status as the kubelet's. The client's end of input ends the
 * attachment, as containerd's and CRI-O's attach do: conmon closes a `stdin_once`
 * container's stdin (its process sees the end, and the output goes on until it exits), and a
 * container whose stdin stays open is detached from (client-go's attach waits for its output
 * streams to end once its input has: critest's attach spec closes its input and waits). A
 * client that goes away detaches too.
 */
import type { Logger } from "pino";
import { AttachInput } from "../../containers/attach-socket.js";
import type { SupervisorClient } from "../../supervisor/client.js";
import { internalErrorStatus, successStatus, type SessionChannels } from "./session-channels.js";
import { pumpInput } from "./stdin-pump.js";

/** conmon's stream bytes ahead of each packet of output. */
const STDOUT_PIPE = 2;
const STDERR_PIPE = 3;

export async function runAttachSession(sup: SupervisorClient, containerId: string, channels: SessionChannels, log: Logger): Promise<void> {
  const state = await sup.get(containerId);
  if (state.status !== "running" || !state.attachPath) return channels.finish(internalErrorStatus(`container ${containerId} is not running`));
  let writes = Promise.resolve();
  let ended: () => void = () => {};
  const end = new Promise<void>((resolve) => (ended = resolve));
  const input = new AttachInput(state.attachPath, (err) => log.debug({ err, container: containerId }, "attach: the attach socket failed"), {
    data(packet) {
      const to = packet[0] === STDOUT_PIPE ? channels.stdout : packet[0] === STDERR_PIPE ? channels.stderr : null;
      // in order, each after the one before has left
      if (to && packet.length > 1) writes = writes.then(() => to.write(Buffer.from(packet.subarray(1)))).catch(() => {});
    },
    end: () => ended(),
  });
  channels.onResize((size) => void sup.resize(containerId, size.height, size.width).catch(() => {}));
  if (channels.stdin) void pumpInput(channels.stdin, input, channels.gone);
  const onGone = () => {
    input.close();
    ended();
  };
  channels.gone.addEventListener("abort", onGone, { once: true });
  await end;
  channels.gone.removeEventListener("abort", onGone);
  if (channels.gone.aborted) return;
  await writes;
  input.close();
  await channels.finish(successStatus());
}
