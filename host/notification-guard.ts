/**
 * The notification hooks (every SyncHook of core/hooks.ts: events, failed starts, applied
 * plugins, answered requests...) are fired from the middle of the daemon's own work: a
 * container's exit is recorded, then `event` fires, then its waiters are told. A tap that
 * throws there would stop that work half way (waiters never told, a cleanup never run) and
 * leave the container's bookkeeping wrong. So each tap of a notification is wrapped: what it
 * throws is logged, with the hook's and the tap's names, and the other taps and the operation
 * go on. The hooks say it already: notification taps must not throw; this is what happens
 * when one does.
 */
import type { Logger } from "pino";
import type { SyncHook } from "tapable";
import type { EngineHooks } from "../core/hooks.js";

type Notifications = { [K in keyof EngineHooks]: EngineHooks[K] extends SyncHook<any, any> ? K : never }[keyof EngineHooks];

/** The hooks that are notifications: a Record, so that a SyncHook added to the hooks and not here fails to compile. */
const NOTIFICATIONS: Record<Notifications, true> = {
  listening: true,
  reloaded: true,
  event: true,
  failedContainerStart: true,
  receivedImageBytes: true,
  appliedPlugin: true,
  answeredRequest: true,
};

/** Wraps every tap of every notification hook, those there now and those tapped later. */
export function guardNotifications(hooks: EngineHooks, log: Logger): void {
  for (const name of Object.keys(NOTIFICATIONS) as Notifications[]) {
    const hook = hooks[name] as SyncHook<unknown[]>;
    hook.intercept({
      register: (tap) => {
        const fn = tap.fn;
        return {
          ...tap,
          fn: (...args: unknown[]) => {
            try {
              return fn(...args);
            } catch (err) {
              log.error({ err, hook: name, tap: tap.name }, `a tap of the ${name} notification failed; the daemon goes on`);
              return undefined;
            }
          },
        };
      },
    });
  }
}
