/**
 * Network events in Docker's shape: the actor is the network's ID; its attributes are its
 * `name` and `type` (the driver: `bridge`, `host`, `null`), and on `connect` and `disconnect`
 * the `container`'s full ID.
 */
import type { NetworkSpec } from "../../core/contracts/network.js";
import { makeEvent, type EngineEvent } from "../../core/events/event.js";

export function networkEvent(spec: Pick<NetworkSpec, "id" | "name" | "driver">, action: string, containerId?: string): EngineEvent {
  return makeEvent("network", action, spec.id, { ...(containerId ? { container: containerId } : {}), name: spec.name, type: spec.driver });
}
