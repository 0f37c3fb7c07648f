/**
 * The driver registry (host/plugins/driver-registry.ts) with real plugin modules in a sandbox's
 * built-in folder and at paths: a driver is made once and kept (asks at the same time share it),
 * a failure is not kept, a client's path is refused before anything is imported, a plugin that
 * makes no driver is a catalogue error, and a plugin loaded from a path answers under its
 * manifest's name.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { EngineError } from "../core/errors.js";
import { createHooks } from "../core/hooks.js";
import { DriverRegistry } from "../host/plugins/driver-registry.js";
import { makeTempDir } from "./helpers/engined.js";

type Counted = typeof globalThis & { __made?: Record<string, number> };
const g = globalThis as Counted;

/** A volume plugin module whose factory counts what it makes (in this process's globals). */
function volumePlugin(id: string, answersAs: string, extra = ""): string {
  return `${extra}
export default {
  manifest: { id: "${id}", kind: "volume" },
  apply(hooks) {
    hooks.createVolumeDriver.for("${answersAs}").tap("${id}", (ctx) => {
      const made = (globalThis.__made ??= {});
      made["${id}"] = (made["${id}"] ?? 0) + 1;
      return { name: "${answersAs}", home: ctx.home };
    });
  },
};
`;
}

describe("driver registry", () => {
  let root: string;
  let builtin: string;
  let registry: DriverRegistry;

  beforeEach(() => {
    g.__made = {};
    root = makeTempDir("engine-registry-");
    builtin = join(root, "builtin");
    mkdirSync(builtin);
    registry = new DriverRegistry({
      hooks: createHooks(),
      log: pino({ level: "silent" }),
      host: { platform: "linux", arch: "x64", kernel: "6", cgroupVersion: 1 },
      dataRoot: join(root, "data"),
      execRoot: join(root, "exec"),
      resolve: { builtinDir: builtin, searchFrom: [root] },
    });
  });

  const ctx = () => ({ dataRoot: join(root, "data"), home: join(root, "data", "volumes") });
  const addBuiltin = (name: string, source: string) => {
    mkdirSync(join(builtin, `volume-${name}`), { recursive: true });
    writeFileSync(join(builtin, `volume-${name}`, "index.js"), source);
  };

  it("makes a driver once and keeps it; asks at the same time share the one being made", async () => {
    addBuiltin("kept", volumePlugin("volume.kept", "kept"));
    const [a, b] = await Promise.all([registry.driver("volume", "kept", { context: ctx }), registry.driver("volume", "kept", { context: ctx })]);
    const c = await registry.driver("volume", "kept", { context: ctx });
    expect(a).to.equal(b);
    expect(c).to.equal(a);
    expect(g.__made).to.deep.equal({ "volume.kept": 1 });
    expect(await registry.madeOf("volume")).to.deep.equal([a]);
    expect(await registry.madeOf("network")).to.deep.equal([]);
  });

  it("keeps no failure: a driver missing at the first ask is made at a later one", async () => {
    const first = await registry.driver("volume", "later", { context: ctx }).catch((e: Error) => e);
    expect(first).to.be.instanceOf(EngineError);
    expect((first as EngineError).code).to.equal("ENGINE_ERR_PLUGIN_NOT_FOUND");
    addBuiltin("later", volumePlugin("volume.later", "later"));
    const driver = await registry.driver("volume", "later", { context: ctx });
    expect(driver.name).to.equal("later");
  });

  it("refuses a client's path before importing anything, and loads the operator's", async () => {
    const marker = join(root, "imported");
    const file = join(root, "by-path.mjs");
    writeFileSync(file, volumePlugin("volume.bypath", "bypath", `import { writeFileSync } from "node:fs"; writeFileSync(${JSON.stringify(marker)}, "");`));
    const refused = await registry.driver("volume", file, { chosenBy: "client", context: ctx }).catch((e: EngineError) => e);
    expect((refused as EngineError).code).to.equal("ENGINE_ERR_PLUGIN_PATH_FROM_CLIENT");
    expect((refused as EngineError).statusCode).to.equal(400);
    expect(existsSync(marker)).to.equal(false);
    // the operator's path: the plugin answers under its manifest's name
    const driver = await registry.driver("volume", file, { chosenBy: "operator", context: ctx });
    expect(driver.name).to.equal("bypath");
    expect(existsSync(marker)).to.equal(true);
  });

  it("reports a plugin that made no driver of that name with a catalogue error", async () => {
    addBuiltin("other", volumePlugin("volume.other", "not-other"));
    const err = (await registry.driver("volume", "other", { context: ctx }).catch((e: EngineError) => e)) as EngineError;
    expect(err.code).to.equal("ENGINE_ERR_PLUGIN_MADE_NO_DRIVER");
    expect(err.message).to.equal('volume plugin "other" was loaded but made no driver: it tapped no createVolumeDriver hook for that name');
  });

  it("reads the caller's daemon-wide options through the manifest before the plugin is applied, and keeps the driver as the caller wraps it", async () => {
    addBuiltin(
      "wrapped",
      `export default {
  manifest: { id: "volume.wrapped", kind: "volume", options: { speed: { type: "uint", description: "how fast" }, mode: { values: ["a", "b"], default: "a", description: "" } } },
  apply(hooks, pctx) {
    hooks.createVolumeDriver.for("wrapped").tap("volume.wrapped", (ctx) => {
      const made = (globalThis.__made ??= {});
      made["volume.wrapped"] = (made["volume.wrapped"] ?? 0) + 1;
      return { name: "wrapped", applied: pctx.options, given: ctx.options, validateOptions() {} };
    });
  },
};
`,
    );
    const refused = await registry
      .driver("volume", "wrapped", { context: ctx, options: () => ({ speed: "fast" }) })
      .catch((e: Error) => e);
    expect((refused as Error).message).to.equal('invalid option "speed": "fast": expected an integer');
    const unknown = await registry.driver("volume", "wrapped", { context: ctx, options: () => ({ colour: "red" }) }).catch((e: Error) => e);
    expect((unknown as Error).message).to.equal('invalid option: "colour" (the wrapped driver knows speed and mode)');
    expect(g.__made).to.deep.equal({});
    const seen: string[] = [];
    const driver = await registry.driver("volume", "wrapped", {
      context: (name, options) => ({ ...ctx(), options }) as ReturnType<typeof ctx>,
      options: (plugin, name) => {
        seen.push(`${plugin.manifest.id} ${name}`);
        return { speed: "3" };
      },
      wrap: (d) => ({ ...d, name: `wrapped ${d.name}` }),
    });
    expect(seen).to.deep.equal(["volume.wrapped wrapped"]);
    expect(driver.name).to.equal("wrapped wrapped");
    // typed, the default filled: at apply (PluginContext.options) and in the factory's context
    const typed = { speed: 3, mode: "a" };
    expect(driver).to.deep.include({ applied: typed, given: typed });
    expect(await registry.driver("volume", "wrapped", { context: ctx })).to.equal(driver);
  });
});
