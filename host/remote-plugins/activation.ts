/**
 * `Plugin.Activate`, the first call to any out-of-process plugin: its answer lists the
 * interfaces it serves (`authz`, `VolumeDriver`). A success is kept for the client's life, as
 * Docker keeps an activated plugin; a failure is forgotten, so that the next use asks again
 * (the plugin may have been started meanwhile).
 */
import type { PluginClient } from "./client.js";

export class PluginActivation {
  private pending: Promise<string[]> | undefined;

  /** `declared`: the interfaces are known without asking (a managed plugin's config declares them). */
  constructor(
    private readonly client: PluginClient,
    declared?: string[],
  ) {
    if (declared) this.pending = Promise.resolve(declared);
  }

  /** The interfaces the plugin serves. */
  interfaces(): Promise<string[]> {
    if (!this.pending) {
      const pending = this.client.call("Plugin.Activate", undefined).then((answer) => {
        const list = (answer as { Implements?: unknown }).Implements;
        return Array.isArray(list) ? list.map(String) : [];
      });
      pending.catch(() => {
        if (this.pending === pending) this.pending = undefined;
      });
      this.pending = pending;
    }
    return this.pending;
  }

  /** Resolves once the plugin is active and serves `iface`; rejects naming what it serves otherwise. */
  async require(iface: string): Promise<void> {
    const list = await this.interfaces();
    if (!list.includes(iface)) throw new NotImplementedError(iface, list);
  }
}

/** An active plugin that serves other interfaces than the one asked for: a plugin of another kind, no failure of it. */
export class NotImplementedError extends Error {
  constructor(iface: string, served: readonly string[]) {
    super(`it does not implement the ${iface} interface (it implements: ${served.join(", ") || "nothing"})`);
  }
}
