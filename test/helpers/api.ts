/** Builds the API in-process (no listener) for white-box tests that use `app.inject()`. */
import type { FastifyInstance } from "fastify";
import { pino } from "pino";
import { createHooks, type EngineHooks } from "../../core/hooks.js";
import { buildApi, type Api } from "../../host/api/app.js";
import type { LoadLimits } from "../../host/api/load-shedding.js";
import type { SystemInfo, VersionInfo } from "../../core/system-info.js";

export async function buildTestApi(opts: {
  hooks?: EngineHooks;
  load?: LoadLimits;
  routes?: ((app: FastifyInstance) => void)[];
} = {}): Promise<Api & { hooks: EngineHooks }> {
  const hooks = opts.hooks ?? createHooks();
  const api = await buildApi({
    hooks,
    log: pino({ level: "silent" }),
    load: opts.load,
    routes: opts.routes,
    systemInfo: async () => hooks.processInfo.promise({ ID: "test" } as SystemInfo),
    versionInfo: async () => hooks.processVersion.promise({ Version: "test", ApiVersion: "1.51" } as VersionInfo),
  });
  return { ...api, hooks };
}
