/**
 * PidMode and IpcMode `container:<id>` (recorded with the full id at create, see
 * create-checks.ts): the container joins the other's pid or IPC namespace, through
 * `/proc/<its pid>/ns/...`, and with IPC its /dev/shm too (the other's own, reached through
 * `/proc/<pid>/root`). As Docker does, the other must be running, and for IPC be `shareable`
 * (or `host`); otherwise the start fails (500) with Docker's message.
 */
import type { ContainerRecord, ContainerStore } from "../../core/containers/container-store.js";
import type { OciNamespace, OciSpec, SpecContext } from "../../core/contracts/runtime.js";
import { errors } from "../../core/errors.js";
import type { EngineHooks } from "../../core/hooks.js";

const joined = (mode: string | undefined) => (mode?.startsWith("container:") ? mode.slice("container:".length) : undefined);

function running(containers: ContainerStore, id: string, prefix: string): ContainerRecord {
  const c = containers.find(id);
  if (!c) throw errors.containerNamespaceUnavailable(`${prefix}No such container: ${id}`);
  if (!c.State.Running || !c.State.Pid) throw errors.containerNamespaceUnavailable(`${prefix}container ${id} is not running`);
  return c;
}

function withNamespace(spec: OciSpec, ns: OciNamespace): OciSpec {
  const namespaces = (spec.linux?.namespaces ?? []).filter((n) => n.type !== ns.type);
  return { ...spec, linux: { ...spec.linux, namespaces: [...namespaces, ns] } };
}

/** The spec with the namespaces of the containers its PidMode and IpcMode name. */
export function shareNamespaces(spec: OciSpec, ctx: SpecContext, containers: ContainerStore): OciSpec {
  let out = spec;
  const pidOf = joined(ctx.hostConfig.PidMode);
  if (pidOf) {
    const donor = running(containers, pidOf, "");
    out = withNamespace(out, { type: "pid", path: `/proc/${donor.State.Pid}/ns/pid` });
  }
  const ipcOf = joined(ctx.hostConfig.IpcMode);
  if (ipcOf) {
    const prefix = `can't join IPC of container ${ipcOf}: `;
    const donor = running(containers, ipcOf, prefix);
    const mode = donor.HostConfig.IpcMode || ctx.daemon["default-ipc-mode"];
    if (mode !== "shareable" && mode !== "host") {
      throw errors.containerNamespaceUnavailable(`${prefix}non-shareable IPC (hint: use IpcMode:shareable for the donor container)`);
    }
    out = withNamespace(out, { type: "ipc", path: `/proc/${donor.State.Pid}/ns/ipc` });
    const source = mode === "host" ? "/dev/shm" : `/proc/${donor.State.Pid}/root/dev/shm`;
    out.mounts = [...(out.mounts ?? []).filter((m) => m.destination !== "/dev/shm"), { destination: "/dev/shm", type: "bind", source, options: ["rbind", "nosuid", "noexec", "nodev"] }];
  }
  return out;
}

export function tapSharedNamespaces(hooks: EngineHooks, containers: ContainerStore): void {
  hooks.processSpec.tapPromise("shared namespaces", async (spec, ctx) => shareNamespaces(spec, ctx, containers));
}
