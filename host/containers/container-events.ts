/**
 * Container events in Docker's shape: the actor is the container's id; its attributes are the
 * image as the client named it, the name, and the container's labels, with what the action adds
 * (`exitCode` on die, `signal` as a number on kill).
 */
import { constants } from "node:os";
import type { ContainerRecord } from "../../core/containers/container-store.js";
import { makeEvent, type EngineEvent } from "../../core/events/event.js";

export function containerEvent(c: ContainerRecord, action: string, extra: Record<string, string> = {}): EngineEvent {
  return makeEvent("container", action, c.Id, {
    ...(c.Config.Labels ?? {}),
    image: c.Config.Image ?? "",
    name: c.Name.replace(/^\//, ""),
    ...extra,
  });
}

/** `KILL`, `SIGTERM` or `15` as the number Docker's events carry. */
export function signalNumber(signal: string): string {
  if (/^\d+$/.test(signal)) return signal;
  const name = `SIG${signal.toUpperCase().replace(/^SIG/, "")}` as keyof typeof constants.signals;
  return String(constants.signals[name] ?? signal);
}
