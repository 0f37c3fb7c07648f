/**
 * PidMode and IpcMode `container:<id>` (recorded with the full id at create, see
 * create-checks.ts): the container joins the other's pid or IPC namespace, through
 * `/proc/<its pid>/ns/...`, and with IPC its /dev/shm too. As Docker does, the other must be
 * running, and for IPC be `shareable` (or `host`); otherwise the start fails (500) with
 * Docker's message. A `shareable` container's /dev/shm is therefore a tmpfs the daemon mounts
 * on the host, at `<exec-root>/containers/<id>/shm` (a mount in another container's mount
 * namespace cannot be bound), and the runner unmounts it with the rest of the run's folder.
 */
import { mkdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { ContainerRecord, ContainerStore } from "../../core/containers/container-store.js";
import type { OciNamespace, OciSpec, SpecContext } from "../../core/contracts/runtime.js";
import { errors } from "../../core/errors.js";
import { mount } from "../../core/fs/mount.js";
import type { EngineHooks } from "../../core/hooks.js";

const joined = (mode: string | undefined) => (mode?.startsWith("container:") ? mode.slice("container:".length) : undefined);

function running(containers: ContainerStore, id: string, prefix: string): ContainerRecord {
  const c = containers.find(id);
  if (!c) throw errors.containerNamespaceUnavailable(`${prefix}No such container: ${id}`);
  if (!c.State.Running || !c.State.Pid) throw errors.containerNamespaceUnavailable(`${prefix}container ${id} is not running`);
  return c;
}

/** The folder of a container's shareable /dev/shm, beside its bundle. */
const shmDir = (containersDir: string, id: string) => join(containersDir, id, "shm");

async function mountedAt(path: string): Promise<boolean> {
  const info = await readFile("/proc/self/mountinfo", "utf8");
  return info.split("\n").some((line) => line.split(" ")[4] === path);
}

/** A shareable container's /dev/shm: a tmpfs of its ShmSize (else `--default-shm-size`) mounted on the host, bound in. */
async function shareableShm(spec: OciSpec, ctx: SpecContext): Promise<OciSpec> {
  const dir = join(dirname(ctx.bundleDir), "shm");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  if (!(await mountedAt(dir))) {
    const size = ctx.hostConfig.ShmSize && ctx.hostConfig.ShmSize > 0 ? ctx.hostConfig.ShmSize : ctx.daemon["default-shm-size"];
    await mount("shm", dir, "tmpfs", ["nosuid", "nodev", "noexec", "mode=1777", `size=${size}`]);
  }
  return withShm(spec, dir);
}

function withShm(spec: OciSpec, source: string): OciSpec {
  const mounts = (spec.mounts ?? []).filter((m) => m.destination !== "/dev/shm");
  return { ...spec, mounts: [...mounts, { destination: "/dev/shm", type: "bind", source, options: ["rbind", "nosuid", "noexec", "nodev"] }] };
}

function withNamespace(spec: OciSpec, ns: OciNamespace): OciSpec {
  const namespaces = (spec.linux?.namespaces ?? []).filter((n) => n.type !== ns.type);
  return { ...spec, linux: { ...spec.linux, namespaces: [...namespaces, ns] } };
}

/** The spec with the namespaces of the containers its PidMode and IpcMode name. */
async function shareNamespaces(spec: OciSpec, ctx: SpecContext, containers: ContainerStore): Promise<OciSpec> {
  let out = spec;
  if ((ctx.hostConfig.IpcMode || ctx.daemon["default-ipc-mode"]) === "shareable") out = await shareableShm(out, ctx);
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
    out = withShm(out, mode === "host" ? "/dev/shm" : shmDir(dirname(dirname(ctx.bundleDir)), donor.Id));
  }
  return out;
}

export function tapSharedNamespaces(hooks: EngineHooks, containers: ContainerStore): void {
  hooks.processSpec.tapPromise("shared namespaces", (spec, ctx) => shareNamespaces(spec, ctx, containers));
}
