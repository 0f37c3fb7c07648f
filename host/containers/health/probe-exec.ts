/**
 * A health probe through the exec path, as Docker runs one: an exec instance in the container
 * (so `exec_create`, `exec_start` and `exec_die` events come, as with Docker), with no stdin and
 * no terminal, the container's user and working directory, its stdout and stderr read into the
 * probe's output. An aborted probe (its timeout passed, or its monitor stopped) is killed; the
 * instance is dropped once its output is read, so that a check every few seconds for weeks
 * keeps no records.
 */
import type { ContainerRecord } from "../../../core/containers/container-store.js";
import type { ProbeOutput } from "../../../core/containers/healthcheck.js";
import type { ExecSessions } from "../exec-sessions.js";
import { followK8sLog } from "../k8s-log-follow.js";
import { entryBytes } from "../../supervisor/k8s-file.js";

export async function execProbe(execs: ExecSessions, c: ContainerRecord, argv: string[], output: ProbeOutput, signal: AbortSignal): Promise<number> {
  const e = execs.create(c, {
    Cmd: argv,
    AttachStdout: true,
    AttachStderr: true,
    ...(c.Config.User ? { User: c.Config.User } : {}),
    ...(c.Config.WorkingDir ? { WorkingDir: c.Config.WorkingDir } : {}),
  });
  try {
    const started = await execs.start(e);
    const kill = () => {
      // (its pid is the host's; it is ours while the instance says it runs)
      if (e.running && e.pid > 0) {
        try {
          process.kill(e.pid, "SIGKILL");
        } catch {
          // it ended meanwhile
        }
      }
    };
    if (signal.aborted) kill();
    signal.addEventListener("abort", kill, { once: true });
    try {
      for await (const l of followK8sLog(started.state.logPath, started.exit, new AbortController().signal)) {
        output.write(entryBytes(l));
      }
      return await started.exit;
    } finally {
      signal.removeEventListener("abort", kill);
      await execs.release(e);
    }
  } finally {
    execs.drop(e);
  }
}
