/**
 * `execFile` as a promise (node:util's promisify of it: `{ stdout, stderr }`, or the error with
 * both), made at its first call. Modules that run programs used to make it at their top level,
 * which loaded node:child_process (2 ms) into every daemon start, whether or not the start ran
 * anything: the chunk loader gives chunks node:child_process as a stand-in loaded at first use
 * (core/chunk-loader.cts), and a top-level `promisify(execFile)` is such a use.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";

type ExecFileAsync = typeof execFile.__promisify__;
let promised: ExecFileAsync | undefined;

export const execFileAsync = ((...args: Parameters<ExecFileAsync>) => (promised ??= promisify(execFile))(...args)) as ExecFileAsync;
