import type { ContainerRecord } from "../../core/containers/container-store.js";

/**
 * The container's stdio as conmon is to set it up: a terminal with `Tty`, a stdin with
 * `OpenStdin`, kept open across attachments unless StdinOnce (without a TTY: Docker does not
 * close a terminal's input when its client goes).
 */
export function stdio(c: ContainerRecord): { terminal?: true; stdin?: true; leaveStdinOpen?: true } {
  return {
    ...(c.Config.Tty ? { terminal: true } : {}),
    ...(c.Config.OpenStdin ? { stdin: true } : {}),
    ...(c.Config.OpenStdin && (c.Config.Tty || !c.Config.StdinOnce) ? { leaveStdinOpen: true } : {}),
  };
}
