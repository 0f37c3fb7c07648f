/**
 * The authorization chain: the plugins named by `--authorization-plugin`, asked in the
 * operator's order, the first denial winning. Each authorization plugin taps private
 * authorization hooks (its other taps go to the daemon's hooks), so that a reload can replace
 * the whole list in one swap, and swap it back if the reload fails.
 */
import { AsyncSeriesBailHook } from "tapable";
import type { AuthzDenial, AuthzRequest, AuthzResponse } from "../core/contracts/authz.js";
import { createHooks, type EngineHooks } from "../core/hooks.js";
import { loadPlugins, type AppliedPlugin, type LoaderDeps } from "./plugins/plugin-loader.js";

interface Link {
  id: string;
  request: AsyncSeriesBailHook<[AuthzRequest], AuthzDenial | undefined>;
  response: AsyncSeriesBailHook<[AuthzResponse], AuthzDenial | undefined>;
}

export class AuthzChain {
  private links: Link[] = [];
  private tapped = false;

  constructor(
    private readonly hooks: EngineHooks,
    private readonly loader: Omit<LoaderDeps, "hooks" | "hooksFor">,
  ) {}

  /** The ids of the plugins in force, in order. */
  ids(): string[] {
    return this.links.map((l) => l.id);
  }

  /**
   * Loads the named plugins and makes them the chain; throws (changing nothing) when one
   * fails. Resolves with the function that puts the previous chain back.
   */
  async replace(names: readonly string[]): Promise<{ plugins: AppliedPlugin[]; undo: () => void }> {
    const privateHooks = new Map<string, EngineHooks>();
    const plugins = await loadPlugins(
      names.map((name) => ({ kind: "authz" as const, name })),
      {
        ...this.loader,
        hooks: this.hooks,
        hooksFor: (plugin) => {
          if (plugin.manifest.kind !== "authz") return this.hooks;
          const own = createHooks();
          const view = Object.freeze({ ...this.hooks, authorizeRequest: own.authorizeRequest, authorizeResponse: own.authorizeResponse });
          privateHooks.set(plugin.manifest.id, view);
          return view;
        },
      },
    );
    const links = plugins
      .filter((p) => privateHooks.has(p.id))
      .map((p) => ({ id: p.id, request: privateHooks.get(p.id)!.authorizeRequest, response: privateHooks.get(p.id)!.authorizeResponse }));
    const previous = this.links;
    this.links = links;
    if (links.length > 0) this.tapOnce();
    return { plugins, undo: () => void (this.links = previous) };
  }

  /** The daemon's authorization hooks stay untapped (free) until a plugin is configured. */
  private tapOnce(): void {
    if (this.tapped) return;
    this.tapped = true;
    this.hooks.authorizeRequest.tapPromise("authz-chain", async (req) => {
      for (const link of this.links) {
        const denial = link.request.isUsed() ? await link.request.promise(req) : undefined;
        if (denial) return denial;
      }
      return undefined;
    });
    this.hooks.authorizeResponse.tapPromise("authz-chain", async (res) => {
      for (const link of this.links) {
        const denial = link.response.isUsed() ? await link.response.promise(res) : undefined;
        if (denial) return denial;
      }
      return undefined;
    });
  }
}
