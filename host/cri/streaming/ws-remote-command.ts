/**
 * Exec and attach over a WebSocket, as the kubelet's remotecommand server serves them: five
 * channels (0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize). Before v5, an empty message goes
 * first on the lowest channel the client reads (stdout, else stderr, else error) to tell it
 * the session stands. `v5.channel.k8s.io` adds the close signal: a message on channel 255 whose byte names
 * the channel the client has closed (its stdin, when its input ends); with older protocols the
 * input ends with the connection. From v4 on the status is JSON.
 */
import type { IncomingMessage } from "node:http";
import { PassThrough, type Duplex } from "node:stream";
import { errors } from "../../../core/errors.js";
import { resizeParser, statusBytes, type SessionChannels, type TerminalSize } from "./session-channels.js";
import { acceptChannels, chooseProtocol, requestedProtocols, type ChannelProtocol } from "./ws-channels.js";

const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const ERROR = 3;
const RESIZE = 4;
const CLOSE = 255;

/** The subprotocols served, and whether each has JSON statuses (v4+) and the close signal (v5). */
const PROTOCOLS: Record<string, ChannelProtocol & { structured: boolean; closeSignal: boolean }> = {
  "": { binary: true, structured: false, closeSignal: false },
  "channel.k8s.io": { binary: true, structured: false, closeSignal: false },
  "base64.channel.k8s.io": { binary: false, structured: false, closeSignal: false },
  "v2.channel.k8s.io": { binary: true, structured: false, closeSignal: false },
  "v3.channel.k8s.io": { binary: true, structured: false, closeSignal: false },
  "v4.channel.k8s.io": { binary: true, structured: true, closeSignal: false },
  "v4.base64.channel.k8s.io": { binary: false, structured: true, closeSignal: false },
  "v5.channel.k8s.io": { binary: true, structured: true, closeSignal: true },
};

export interface StreamOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
}

/** The protocol the client gets, or the catalogue's refusal (403) when it offers none of ours. */
export function wsCommandProtocol(req: IncomingMessage): string {
  const requested = requestedProtocols(req);
  const chosen = chooseProtocol(requested, PROTOCOLS);
  if (chosen === undefined) throw errors.criStreamProtocol(requested.join(" "), Object.keys(PROTOCOLS).filter(Boolean).join(" "));
  return chosen;
}

export async function wsCommandChannels(req: IncomingMessage, socket: Duplex, head: Buffer, protocol: string, opts: StreamOptions): Promise<SessionChannels> {
  const form = PROTOCOLS[protocol];
  const ch = await acceptChannels(req, socket, head, protocol, form);
  const stdin = opts.stdin ? new PassThrough() : null;
  const gone = new AbortController();
  const resizeListeners: ((size: TerminalSize) => void)[] = [];
  const onResize = resizeParser((size) => resizeListeners.forEach((l) => l(size)));
  let finished = false;
  ch.onMessage((channel, data) => {
    if (channel === STDIN && stdin && !stdin.write(data)) {
      // a process that does not read its input holds the client back, not our memory
      ch.ws.pause();
      stdin.once("drain", () => ch.ws.resume());
    }
    else if (channel === RESIZE) onResize(data);
    else if (channel === CLOSE && form.closeSignal && data[0] === STDIN) stdin?.end();
  });
  ch.ws.on("close", () => {
    stdin?.end();
    if (!finished) gone.abort();
  });
  ch.ws.on("error", () => {});
  // Tells a client of the kubelet's older protocols that the streams are ready. Not to v5 ones:
  // client-go's (kubectl's) reads nothing before its streams are made, and may read that
  // message before they are ("Unknown stream id 1, discarding message" on its stderr).
  if (!form.closeSignal) await ch.send(opts.stdout ? STDOUT : opts.stderr ? STDERR : ERROR, Buffer.alloc(0));
  const writer = (channel: number) => ({ write: (data: Buffer) => ch.send(channel, data) });
  return {
    stdin,
    stdout: opts.stdout ? writer(STDOUT) : null,
    stderr: opts.stderr ? writer(STDERR) : null,
    onResize: (l) => void resizeListeners.push(l),
    gone: gone.signal,
    async finish(status) {
      finished = true;
      const bytes = statusBytes(status, form.structured);
      if (bytes.length) await ch.send(ERROR, bytes);
      ch.close();
    },
  };
}
