/**
 * The CRI calls Exec, Attach and PortForward: the request is checked now (the container exists
 * and runs, the pod is ready, `tty` with `stderr` refused since a terminal has one output, at
 * least one stream, ports in 1..65535), kept under a single-use token (stream-tokens.ts), and
 * answered with the streaming server's URL for it. The session itself starts when the client
 * comes (stream-sessions.ts).
 */
import { errors } from "../../../core/errors.js";
import type { CriContainerService } from "../containers/container-service.js";
import type { CriHandlers } from "../cri-server.js";
import type { SandboxService } from "../sandbox/sandbox-service.js";
import type { StreamTicket, StreamTokens } from "./stream-tokens.js";

interface StreamFlags {
  tty: boolean;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
}

export interface StreamHandlerDeps {
  containers: CriContainerService;
  sandboxes: SandboxService;
  tokens: StreamTokens;
  url(kind: StreamTicket["kind"], token: string): string;
}

function checkFlags(f: StreamFlags): void {
  if (f.tty && f.stderr) throw errors.criInvalidArgument("tty", "tty and stderr cannot both be true: a terminal has one output");
  if (!f.stdin && !f.stdout && !f.stderr) throw errors.criInvalidArgument("stdin", "one of stdin, stdout, or stderr must be set");
}

export function streamHandlers(deps: StreamHandlerDeps): CriHandlers {
  const answer = (ticket: StreamTicket) => ({ url: deps.url(ticket.kind, deps.tokens.put(ticket)) });
  return {
    async Exec(req: { containerId: string; cmd: string[] } & StreamFlags) {
      if (req.cmd.length === 0 || !req.cmd[0]) throw errors.criInvalidArgument("cmd", "the command to run is required");
      checkFlags(req);
      const rec = deps.containers.running(req.containerId, "a command runs only in a running container");
      return answer({ kind: "exec", containerId: rec.id, cmd: req.cmd, tty: req.tty, stdin: req.stdin, stdout: req.stdout, stderr: req.stderr });
    },
    async Attach(req: { containerId: string } & StreamFlags) {
      checkFlags(req);
      const rec = deps.containers.running(req.containerId, "only a running container can be attached to");
      if (req.stdin && !rec.config.stdin) throw errors.criInvalidArgument("stdin", `container ${rec.id} was not created with stdin: there is no input to attach to`);
      return answer({ kind: "attach", containerId: rec.id, tty: req.tty, stdin: req.stdin, stdout: req.stdout, stderr: req.stderr });
    },
    async PortForward(req: { podSandboxId: string; port: number[] }) {
      const pod = deps.sandboxes.get(req.podSandboxId);
      if (pod.state !== "SANDBOX_READY") throw errors.criSandboxNotReady(pod.id);
      for (const p of req.port) if (!Number.isInteger(p) || p < 1 || p > 65535) throw errors.criInvalidArgument("port", `${p} is not a port number (1-65535)`);
      return answer({ kind: "portforward", sandboxId: pod.id, ports: req.port });
    },
  };
}
