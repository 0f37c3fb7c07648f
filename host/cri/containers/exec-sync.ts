/**
 * ExecSync: a command run in a running CRI container to its end (the kubelet's exec probes),
 * its stdout and stderr answered apart. It runs as `docker exec` does, under a conmon of its
 * own (the supervisor's exec sessions), the process made from the container's bundle by the
 * runtime plugin; its output is read from that conmon's k8s-file log once it has exited,
 * each stream capped at 16 MiB as the CRI asks. A timeout kills it and answers
 * DEADLINE_EXCEEDED, as containerd does.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { status as GrpcStatus } from "@grpc/grpc-js";
import type { OciSpec, RuntimeDriver } from "../../../core/contracts/runtime.js";
import { errors } from "../../../core/errors.js";
import type { SupervisorClient } from "../../supervisor/client.js";
import { readK8sLog } from "../../supervisor/conmon.js";
import { entryBytes } from "../../supervisor/k8s-file.js";

const OUTPUT_CAP = 16 * 1024 * 1024;

export interface ExecSyncTarget {
  id: string;
  bundle: string;
  rootfs: string;
}

export async function execSync(sup: SupervisorClient, runtime: RuntimeDriver, c: ExecSyncTarget, cmd: string[], timeoutSeconds: number) {
  if (cmd.length === 0 || !cmd[0]) throw errors.criInvalidArgument("cmd", "the command to run is required");
  let process;
  try {
    const spec = JSON.parse(readFileSync(join(c.bundle, "config.json"), "utf8")) as OciSpec;
    process = runtime.execProcess({ spec, rootfs: c.rootfs, exec: { Cmd: cmd, Env: [], Tty: false } });
  } catch (err) {
    throw errors.criInvalidArgument("cmd", (err as Error).message);
  }
  const execId = randomBytes(32).toString("hex");
  const state = await sup.exec(c.id, { execId, process });
  try {
    const deadline = timeoutSeconds > 0 ? AbortSignal.timeout(timeoutSeconds * 1000) : undefined;
    let exitCode: number;
    try {
      exitCode = await sup.execWait(c.id, execId, deadline);
    } catch (err) {
      if (!deadline?.aborted) throw err;
      try {
        globalThis.process.kill(state.pid, "SIGKILL");
      } catch {
        // it ended meanwhile
      }
      throw Object.assign(new Error(`command ${JSON.stringify(cmd.join(" "))} timed out after ${timeoutSeconds}s`), { grpcCode: GrpcStatus.DEADLINE_EXCEEDED });
    }
    const out: Record<"stdout" | "stderr", Buffer[]> = { stdout: [], stderr: [] };
    const size = { stdout: 0, stderr: 0 };
    for (const line of await readK8sLog(state.logPath).catch(() => [])) {
      const piece = entryBytes(line);
      if (size[line.stream] + piece.length > OUTPUT_CAP) continue;
      size[line.stream] += piece.length;
      out[line.stream].push(piece);
    }
    return { stdout: Buffer.concat(out.stdout), stderr: Buffer.concat(out.stderr), exitCode };
  } finally {
    await sup.execRemove(c.id, execId).catch(() => {});
  }
}
