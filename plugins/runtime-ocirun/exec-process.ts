/**
 * The OCI process of an exec session, made from the container's own process (as its
 * config.json says) the way Docker makes one: the exec's command as given (no entrypoint), the
 * container's environment with the exec's `Env` over it (and TERM=xterm with a terminal), the
 * exec's user and working directory or else the container's, every capability when privileged.
 */
import type { ExecProcessContext, OciProcess } from "../../core/contracts/runtime.js";
import { ALL_CAPABILITIES, mergeEnv, resolveUser } from "./spec.js";

export function execProcess(ctx: ExecProcessContext): OciProcess {
  const base = ctx.spec.process;
  if (!base) throw new Error("the container's spec has no process");
  const exec = ctx.exec;
  // TERM=xterm goes with the exec's terminal, not the container's: Docker makes an exec's
  // defaults from the exec's Tty (the container's own TERM=xterm default, in a container with a
  // terminal, is left out of an exec without one; a TERM the container's Env set to another
  // value stays)
  const own = base.terminal && !exec.Tty ? (base.env ?? []).filter((e) => e !== "TERM=xterm") : (base.env ?? []);
  let env = mergeEnv(own, (exec.Env ?? []).filter((e) => e.includes("=")));
  if (exec.Tty && !env.some((e) => e.startsWith("TERM="))) env = [...env, "TERM=xterm"];
  const caps = exec.Privileged ? [...ALL_CAPABILITIES] : undefined;
  const process: OciProcess = {
    ...base,
    terminal: exec.Tty === true,
    args: exec.Cmd,
    env,
    cwd: exec.WorkingDir || base.cwd,
    user: exec.User ? resolveUser(ctx.rootfs, exec.User, ctx.groupAdd ?? []) : base.user,
    ...(caps ? { capabilities: { bounding: caps, effective: caps, permitted: caps } } : {}),
  };
  delete process.consoleSize;
  if (exec.Tty && exec.ConsoleSize && exec.ConsoleSize[0] > 0 && exec.ConsoleSize[1] > 0) {
    process.consoleSize = { height: exec.ConsoleSize[0], width: exec.ConsoleSize[1] };
  }
  return process;
}
