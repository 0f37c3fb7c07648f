/**
 * What a failed start tells its client, and the exit code Docker records for it: 127 for a
 * command not found, 126 for one not executable, 128 for the runtime's or the log driver's
 * other failures; a failure the engine itself names (an EngineError) passes as it is.
 */
import { EngineError, errors } from "../../core/errors.js";
import { SupervisorClientError } from "../supervisor/client.js";
import { LOGGER_FAILED } from "../supervisor/supervisor.js";

/** Docker's words after a runtime's "not a directory" (moby daemon/errors.go), at a start or an exec. */
const MOUNT_TYPE_HINT = ": Are you trying to mount a directory onto a file (or vice-versa)? Check if the specified host path exists and is the expected type";

/**
 * An exec the runtime refused to run, as Docker's daemon answers it (daemon/errors.go): the
 * command missing, not executable or a directory (Docker adds "permission denied", which the
 * CLI reads), or a working directory that is a file (with its hint), is the request's fault
 * (400); any other failure is the daemon's (500).
 */
export function execStartError(message: string): EngineError {
  if (/is a directory/i.test(message)) return errors.execCommandFailed(message, ": permission denied");
  if (/not a directory/i.test(message)) return errors.execCommandFailed(message, MOUNT_TYPE_HINT);
  if (/permission denied|executable file not found|no such file or directory|failed to run runc create\/exec call/i.test(message)) return errors.execCommandFailed(message);
  return errors.execStartFailed(message);
}

export function startFailure(err: Error): { error: Error; message: string; exitCode?: number } {
  if (err instanceof EngineError) return { error: err, message: err.message };
  if (err instanceof SupervisorClientError && err.status === 400 && err.message.startsWith(LOGGER_FAILED)) {
    // A logger the supervisor could not make (a log option the driver refused, a syslog server
    // down): Docker's 500, and the container stays created.
    const e = errors.containerLogInitFailed(err.message.slice(LOGGER_FAILED.length));
    return { error: e, message: e.message, exitCode: 128 };
  }
  if (err.name === "SpecError") {
    const e = errors.containerInvalidSpec(err.message);
    return { error: e, message: e.message };
  }
  const text = err.message;
  // a directory mounted onto a file or the other way round (a user's bind, most often): Docker's
  // daemon adds its hint to the runtime's words and takes it as the request's fault
  if (/not a directory/i.test(text)) {
    const e = errors.containerCommandFailed(`${text}${MOUNT_TYPE_HINT}`);
    return { error: e, message: e.message, exitCode: 127 };
  }
  if (/executable file not found|no such file or directory/i.test(text)) {
    const e = errors.containerCommandFailed(text);
    return { error: e, message: e.message, exitCode: 127 };
  }
  if (/permission denied/i.test(text)) {
    const e = errors.containerCommandFailed(text);
    return { error: e, message: e.message, exitCode: 126 };
  }
  // A value of the request the kernel refuses in the container's cgroup: runc's write of it to a
  // cgroup file failed with EINVAL, as it sets the limits (a pids limit past what the kernel
  // counts) or applies them before the process joins (a real-time budget its parent cgroup
  // lacks: runc sets that one first). The same words, "failed to create task for container:"
  // and exit code 128, as Docker 28; its status is not: dockerd 20.10 and Docker 28 answer 500
  // (containerd's error is gRPC's Unknown, which moby's start translation keeps), a fault of the
  // request answers 400 here. Other refusals of a write (EBUSY: a memory limit below what the
  // container uses) say no value is wrong and stay the runtime's failure.
  if (/(unable to apply cgroup configuration|error setting cgroup config)[^:]*: failed to write "[^"]*": write \/sys\/fs\/cgroup\/\S+: invalid argument/.test(text)) {
    const e = errors.containerResourceRefused(text);
    return { error: e, message: e.message, exitCode: 128 };
  }
  // the runtime refused the container (a sysctl runc will not set, a device it cannot make):
  // Docker's daemon says its create failed, as it does for a command not found
  const e = /^failed to create shim task/.test(text) ? errors.containerTaskFailed(text) : errors.containerStartFailed(text);
  return { error: e, message: e.message, exitCode: 128 };
}
