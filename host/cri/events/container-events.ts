/**
 * GetContainerEvents: the stream a kubelet's evented PLEG follows instead of listing every
 * container each second. The container service reports each change once it is recorded
 * (created; started; stopped: exited, killed, or a start that failed; deleted), and every
 * listener gets the container's id, the kind, the time, and, as containerd sends them, the
 * status of the container's pod and of all the pod's containers as they are after the change
 * (a deleted container is no longer among them).
 *
 * Listeners are freed when their client goes (the call is cancelled or closed), and cut off with
 * RESOURCE_EXHAUSTED when they stop reading: a stuck client must not make engined hold every
 * event for it (the kubelet then relists, as it does after any error on this stream).
 */
import { status } from "@grpc/grpc-js";
import type { CriStreamHandlers } from "../cri-server.js";

export type ContainerEventType = "CONTAINER_CREATED_EVENT" | "CONTAINER_STARTED_EVENT" | "CONTAINER_STOPPED_EVENT" | "CONTAINER_DELETED_EVENT";

/** What the event carries of the pod: its status and its containers' statuses, as the status calls answer them. */
export interface PodView {
  podSandboxStatus: object | null;
  containersStatuses: object[];
}

export interface ContainerEventMsg extends PodView {
  containerId: string;
  containerEventType: ContainerEventType;
  createdAt: string;
}

interface Listener {
  send(event: ContainerEventMsg): void;
  end(): void;
}

/** Events a listener may have waiting, unread, before it is cut off. */
export const MAX_UNREAD_EVENTS = 1000;

export class ContainerEvents {
  private readonly listeners = new Set<Listener>();

  constructor(private readonly describe: (sandboxId: string) => PodView) {}

  get listenerCount(): number {
    return this.listeners.size;
  }

  publish(type: ContainerEventType, containerId: string, sandboxId: string, createdAt: string): void {
    if (this.listeners.size === 0) return;
    const event: ContainerEventMsg = { containerId, containerEventType: type, createdAt, ...this.describe(sandboxId) };
    for (const l of this.listeners) l.send(event);
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Ends every stream (the server is closing): its clients see the stream end and reconnect later. */
  close(): void {
    for (const l of [...this.listeners]) l.end();
    this.listeners.clear();
  }

  handlers(): CriStreamHandlers {
    return {
      GetContainerEvents: (_request, call) => {
        const unsubscribe = this.subscribe({
          send: (event) => {
            call.write(event);
            if (call.writableLength > MAX_UNREAD_EVENTS) {
              unsubscribe();
              // grpc-js's stream ends with an error's code as its status (after what is queued):
              // no more is queued for it, so what it holds stays bounded
              call.emit("error", Object.assign(new Error(`the client read none of the last ${MAX_UNREAD_EVENTS} container events`), { code: status.RESOURCE_EXHAUSTED }));
            }
          },
          end: () => call.end(),
        });
        call.on("cancelled", unsubscribe);
        call.on("close", unsubscribe);
        call.on("error", unsubscribe);
      },
    };
  }
}
