/**
 * A connection to `localhost:<port>` of a pod, for port-forward sessions: inside the pod's
 * pinned network namespace through port-forward-helper.ts run under `nsenter --net` (a Node
 * process cannot enter a namespace itself), or straight from engined for a pod on the node's
 * network. `connection` is the byte stream both ways; `failed` settles with the reason when the
 * connection could not be made (or broke), with undefined when it ended well.
 */
import { spawn } from "node:child_process";
import { connect } from "node:net";
import { Duplex } from "node:stream";
import { fileURLToPath } from "node:url";
import type { SandboxRecord } from "../sandbox/sandbox-service.js";

const HELPER = fileURLToPath(new URL("./port-forward-helper.js", import.meta.url));

export interface PodConnection {
  connection: Duplex;
  failed: Promise<string | undefined>;
  close(): void;
}

export function connectPodPort(pod: SandboxRecord, port: number): PodConnection {
  const netns = pod.pinned.paths.net;
  if (!netns) {
    const socket = connect(port, "127.0.0.1");
    const failed = new Promise<string | undefined>((resolve) => {
      socket.once("error", (err: NodeJS.ErrnoException) => resolve(err.code === "ECONNREFUSED" ? `dial tcp 127.0.0.1:${port}: connect: connection refused` : err.message));
      socket.once("close", () => resolve(undefined));
    });
    return { connection: socket, failed, close: () => socket.destroy() };
  }
  const child = spawn("nsenter", [`--net=${netns}`, "--", process.execPath, HELPER, String(port)], { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  child.stdin.on("error", () => {});
  const failed = new Promise<string | undefined>((resolve) => {
    child.once("error", (err) => resolve(err.message));
    child.once("close", (code) => resolve(code === 0 ? undefined : stderr.trim() || `the port-forward helper exited with ${code}`));
  });
  return {
    connection: Duplex.from({ readable: child.stdout, writable: child.stdin }),
    failed,
    close: () => child.kill("SIGKILL"),
  };
}
