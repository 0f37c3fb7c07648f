/**
 * What a failed start tells its client, and the exit code Docker records for it: 127 for a
 * command not found, 126 for one not executable, 128 for the runtime's or the log driver's
 * other failures; a failure the engine itself names (an EngineError) passes as it is.
 */
import { EngineError, errors } from "../../core/errors.js";
import { LOG_INIT_FAILED } from "../plugins/log-drivers.js";

export function startFailure(err: Error): { error: Error; message: string; exitCode?: number } {
  if (err instanceof EngineError) return { error: err, message: err.message };
  if (err.name === "SpecError") {
    const e = errors.containerInvalidSpec(err.message);
    return { error: e, message: e.message };
  }
  const text = err.message;
  if (text.startsWith(LOG_INIT_FAILED)) {
    const e = errors.containerLogInitFailed(text.slice(LOG_INIT_FAILED.length));
    return { error: e, message: e.message, exitCode: 128 };
  }
  if (/executable file not found|no such file or directory/i.test(text)) {
    const e = errors.containerCommandFailed(text);
    return { error: e, message: e.message, exitCode: 127 };
  }
  if (/permission denied/i.test(text)) {
    const e = errors.containerCommandFailed(text);
    return { error: e, message: e.message, exitCode: 126 };
  }
  const e = errors.containerStartFailed(text);
  return { error: e, message: e.message, exitCode: 128 };
}
