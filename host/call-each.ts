/**
 * Calls every tap of an AsyncSeriesHook even when some throw: cleanup hooks (`shutdown`) must
 * give each plugin its turn. Failures are reported one by one through `onError`.
 */
import type { AsyncSeriesHook } from "tapable";

type Callback = (err?: Error | null) => void;

export async function callEach<A extends unknown[]>(
  hook: AsyncSeriesHook<A>,
  args: NoInfer<A>,
  onError: (tapName: string, err: unknown) => void,
): Promise<void> {
  for (const tap of hook.taps) {
    const fn = tap.fn as (...a: unknown[]) => unknown;
    try {
      if (tap.type === "async") {
        await new Promise<void>((resolve, reject) => fn(...args, ((err) => (err ? reject(err) : resolve())) as Callback));
      } else {
        await fn(...args);
      }
    } catch (err) {
      onError(tap.name, err);
    }
  }
}
