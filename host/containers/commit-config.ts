/**
 * The configuration of a commit that was sent with the request (`POST /commit` with a body):
 * what it leaves out is taken from the container's, by Docker's rules (ports, environment,
 * labels and volumes are added to; the rest is filled only when empty).
 */
import type { ContainerConfig } from "../../core/images/image-config.js";

const envKey = (e: string) => e.split("=")[0];

export function mergeCommitConfig(user: ContainerConfig, container: ContainerConfig): ContainerConfig {
  const out: ContainerConfig = structuredClone(user);
  if (!out.User) out.User = container.User;
  out.ExposedPorts = { ...(container.ExposedPorts ?? {}), ...(out.ExposedPorts ?? {}) };
  const env = [...(out.Env ?? [])];
  for (const e of container.Env ?? []) if (!env.some((mine) => envKey(mine) === envKey(e))) env.push(e);
  out.Env = env;
  out.Labels = { ...(container.Labels ?? {}), ...(out.Labels ?? {}) };
  if (!out.Entrypoint?.length) {
    if (!out.Cmd?.length) out.Cmd = container.Cmd;
    if (out.Entrypoint == null) out.Entrypoint = container.Entrypoint;
  }
  if (!out.WorkingDir) out.WorkingDir = container.WorkingDir;
  // Docker's rule: the container's volumes are added over the request's
  out.Volumes = { ...(out.Volumes ?? {}), ...(container.Volumes ?? {}) };
  if (!out.StopSignal) out.StopSignal = container.StopSignal;
  return out;
}
