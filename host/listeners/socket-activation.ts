/**
 * Sockets passed by systemd-style socket activation: `LISTEN_PID` names this process and
 * `LISTEN_FDS` counts the descriptors, which start at 3. The variables are removed once read,
 * so that children do not take the sockets for theirs.
 */
import { errors } from "../../core/errors.js";

const FIRST_FD = 3;

export function takeActivationFds(env: NodeJS.ProcessEnv): number[] {
  const pid = Number(env.LISTEN_PID);
  const count = Number(env.LISTEN_FDS);
  delete env.LISTEN_PID;
  delete env.LISTEN_FDS;
  delete env.LISTEN_FDNAMES;
  if (!Number.isInteger(pid) || pid !== process.pid || !Number.isInteger(count) || count <= 0) return [];
  return Array.from({ length: count }, (_, i) => FIRST_FD + i);
}

/** The descriptors that `fd://` (all) or `fd://N` (one) names; missing ones are fatal. */
export function selectActivationFds(available: readonly number[], wanted: number | undefined): number[] {
  if (available.length === 0) {
    throw errors.listenerNoActivationSocket("no sockets found via socket activation: make sure the service was started by systemd");
  }
  if (wanted === undefined) return [...available];
  if (!available.includes(wanted)) {
    throw errors.listenerNoActivationSocket(
      `too few sockets to activate: fd://${wanted} was asked for, the activated sockets are ${available.join(", ")}`,
    );
  }
  return [wanted];
}
