/**
 * How volumes and a container's mounts look through the API (Docker Engine API v1.51): the
 * `Volume` object of inspect, list and create, and the `MountPoint` of container inspect and
 * list (`Name` and `Driver` for volumes only).
 */
import type { ContainerMount } from "../../core/containers/mount-point.js";
import type { LiveVolume, VolumeService } from "./volume-service.js";
import type { VolumeRecord } from "./volume-store.js";

/** `live`: what the volume's driver says now (its scope, and at inspect its status). */
export function volumeDocument(v: VolumeRecord, usage?: { Size: number; RefCount: number }, live?: Omit<LiveVolume, "record">): Record<string, unknown> {
  return {
    CreatedAt: v.CreatedAt,
    Driver: v.Driver,
    Labels: v.Labels,
    Mountpoint: v.Mountpoint,
    Name: v.Name,
    Options: v.Options,
    Scope: live?.scope ?? "local",
    ...(live?.status ? { Status: live.status } : {}),
    ...(usage ? { UsageData: usage } : {}),
  };
}

export function mountView(m: ContainerMount): Record<string, unknown> {
  return {
    Type: m.Type,
    ...(m.Type === "volume" ? { Name: m.Name ?? "" } : m.Type === "image" && m.Name ? { Name: m.Name } : {}),
    Source: m.Source,
    Destination: m.Destination,
    ...(m.Type === "volume" ? { Driver: m.Driver ?? "" } : {}),
    Mode: m.Mode,
    RW: m.RW,
    Propagation: m.Propagation,
  };
}

/** Every volume with its `UsageData` (`GET /system/df`): bytes (-1 when the driver cannot say) and the containers using it. */
export async function volumesWithUsage(volumes: VolumeService): Promise<Record<string, unknown>[]> {
  return Promise.all(volumes.list().map(async (v) => volumeDocument(v, { Size: await volumes.usage(v), RefCount: volumes.users(v.Name).length })));
}
