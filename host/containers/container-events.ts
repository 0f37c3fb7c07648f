/**
 * Container events in Docker's shape: the actor is the container's id; its attributes are the
 * image as the client named it, the name, and the container's labels, with what the action adds
 * (`exitCode` on die, `signal` as a number on kill).
 */
import type { ContainerRecord } from "../../core/containers/container-store.js";
import { signalNumberText } from "../../core/containers/signals.js";
import { makeEvent, type EngineEvent } from "../../core/events/event.js";

export function containerEvent(c: ContainerRecord, action: string, extra: Record<string, string> = {}): EngineEvent {
  return makeEvent("container", action, c.Id, {
    ...(c.Config.Labels ?? {}),
    // (none for a container of no image, a build step's in a stage FROM scratch, as Docker leaves it out)
    ...(c.Config.Image ? { image: c.Config.Image } : {}),
    name: c.Name.replace(/^\//, ""),
    ...extra,
  });
}

/** `KILL`, `SIGTERM`, `15` or `SIGRTMIN+3` as the number Docker's events carry. */
export const signalNumber = (signal: string): string => signalNumberText(signal);
