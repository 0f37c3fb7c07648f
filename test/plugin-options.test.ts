/**
 * Plugin options (core/options/plugin-options.ts, host/plugins/plugin-options.ts): the manifest's
 * declarations read what a user gives, typed, and a refusal is worded as each kind's API words it;
 * a manifest whose option names no known type is not a plugin.
 */
import "./helpers/root-hooks.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import type { PluginManifest } from "../core/contracts/plugin.js";
import type { EngineError } from "../core/errors.js";
import { parsePluginOptions, PluginOptionProblem } from "../core/options/plugin-options.js";
import { importPlugin } from "../host/plugins/load-plugin.js";
import type { LogDriver } from "../core/contracts/log.js";
import type { NetworkDriver, NetworkSpec } from "../core/contracts/network.js";
import { checkPluginOptions, withDeclaredOptions } from "../host/plugins/plugin-options.js";
import { makeTempDir } from "./helpers/engined.js";

const declared: Pick<PluginManifest, "options"> = {
  options: {
    count: { type: "uint", description: "" },
    limit: { type: "size", default: "1G", description: "" },
    fast: { type: "bool", description: "" },
    colour: { values: ["red", "blue"], description: "" },
    label: { description: "" },
  },
};

describe("plugin options", () => {
  it("reads declared options by their types and fills defaults", () => {
    expect(parsePluginOptions(declared, { count: "3", fast: "true", colour: "red", label: "x y" })).to.deep.equal({
      count: 3,
      fast: true,
      colour: "red",
      label: "x y",
      limit: 1024 ** 3,
    });
    expect(parsePluginOptions(declared, { limit: "512m" })).to.deep.equal({ limit: 512 * 1024 ** 2 });
  });

  it("takes anything from a manifest that declares no options, and keys every plugin of a kind takes", () => {
    expect(parsePluginOptions({}, { anything: "goes" })).to.deep.equal({ anything: "goes" });
    expect(parsePluginOptions(declared, { mode: "blocking" }, ["mode"])).to.deep.equal({ mode: "blocking", limit: 1024 ** 3 });
  });

  it("says which key is unknown or which value its type cannot read", () => {
    const problem = (given: Record<string, string>) => {
      try {
        parsePluginOptions(declared, given);
      } catch (err) {
        return err as PluginOptionProblem;
      }
      throw new Error("not refused");
    };
    expect(problem({ size: "1" })).to.deep.include({ problem: "unknown", key: "size" });
    expect(problem({ count: "-1" })).to.deep.include({ problem: "invalid", key: "count", value: "-1", why: "expected an integer of at least 0" });
    expect(problem({ limit: "0" })).to.deep.include({ problem: "invalid", why: "must be larger than 0" });
    expect(problem({ colour: "green" })).to.deep.include({ problem: "invalid", why: "expected one of: red, blue" });
    // a key named like an Object property is no declaration
    expect(problem({ constructor: "x" })).to.deep.include({ problem: "unknown", key: "constructor" });
  });

  it("words a refusal as each kind's API does", () => {
    const manifest = (kind: PluginManifest["kind"]): PluginManifest => ({ id: `${kind}.mine`, kind, ...declared });
    const refused = (kind: PluginManifest["kind"], given: Record<string, string>) => {
      try {
        checkPluginOptions(kind, "mine", manifest(kind), given);
      } catch (err) {
        return err as EngineError;
      }
      throw new Error("not refused");
    };
    expect(refused("storage", { nope: "1" })).to.deep.include({ message: "mine: unknown option nope", code: "ENGINE_ERR_STORAGE_DRIVER_OPTION_UNKNOWN", statusCode: 400 });
    expect(refused("storage", { count: "x" })).to.deep.include({ message: 'mine: invalid count "x": expected an integer', statusCode: 400 });
    expect(checkPluginOptions("storage", "none", { id: "storage.none", kind: "storage", options: {} }, {})).to.deep.equal({});
    expect(() => checkPluginOptions("storage", "none", { id: "storage.none", kind: "storage", options: {} }, { "none.x": "1" })).to.throw(
      "none: unknown option none.x (the none storage driver has no options)",
    );
    expect(refused("log", { nope: "1" }).message).to.equal("unknown log opt 'nope' for mine log driver");
    // Docker's daemon checks the options of every log driver first, in its words
    expect(refused("log", { mode: "sometimes" }).message).to.equal("logger: logging mode not supported: sometimes");
    expect(checkPluginOptions("log", "mine", manifest("log"), { mode: "non-blocking", "max-buffer-size": "1m" })).to.include({ mode: "non-blocking" });
    expect(refused("volume", { nope: "1" }).message).to.equal('invalid option: "nope" (the mine driver knows count, limit, fast, colour and label)');
    expect(refused("volume", { fast: "yes" }).message).to.equal('invalid option "fast": "yes": expected a boolean (true or false)');
    expect(refused("network", { nope: "1" }).message).to.equal("unknown option for the mine driver: nope");
  });

  it("applies the declarations to a driver after its own checks, whose words win", () => {
    const manifest: PluginManifest = { id: "log.mine", kind: "log", options: { size: { type: "size", description: "" } } };
    class Mine {
      readonly name = "mine";
      #own = "mine's own";
      validateOptions(options: Record<string, string>) {
        if ("bad" in options) throw new Error(`${this.#own}: bad`);
      }
    }
    const driver = withDeclaredOptions("log", "mine", manifest, new Mine() as unknown as LogDriver);
    expect(driver.name).to.equal("mine");
    expect(() => driver.validateOptions({ bad: "1" })).to.throw("mine's own: bad");
    expect(() => driver.validateOptions({ size: "0" })).to.throw("invalid value for log opt 'size' (\"0\"): must be larger than 0");
    expect(() => driver.validateOptions({ other: "1" })).to.throw("unknown log opt 'other' for mine log driver");
    expect(() => driver.validateOptions({ size: "1m" })).to.not.throw();
    // a manifest that declares nothing leaves the driver as it is
    const plain = new Mine() as unknown as LogDriver;
    expect(withDeclaredOptions("log", "mine", { id: "log.mine", kind: "log" }, plain)).to.equal(plain);
  });

  it("checks a network's options before the driver makes it, after the driver's own check", () => {
    const seen: string[] = [];
    const network = {
      checkNetwork: (net: NetworkSpec) => void seen.push(net.name),
    } as unknown as NetworkDriver;
    const manifest: PluginManifest = { id: "network.mine", kind: "network", options: { "mine.mtu": { type: "uint", description: "" } } };
    const driver = withDeclaredOptions("network", "mine", manifest, network);
    const net = (options: Record<string, string>) => ({ name: "n1", options }) as unknown as NetworkSpec;
    expect(() => driver.checkNetwork!(net({ "mine.mtu": "big" }), [])).to.throw('invalid value for option mine.mtu ("big"): expected an integer');
    expect(() => driver.checkNetwork!(net({ "mine.speed": "1" }), [])).to.throw("unknown option for the mine driver: mine.speed");
    driver.checkNetwork!(net({ "mine.mtu": "1400" }), []);
    expect(seen).to.deep.equal(["n1", "n1", "n1"]);
  });

  it("refuses a plugin whose manifest names a type that does not exist", async () => {
    const file = join(makeTempDir("engine-plugin-options-"), "bad.js");
    writeFileSync(file, `export default { manifest: { id: "volume.bad", kind: "volume", options: { x: { type: "colour", description: "" } } }, apply() {} };`);
    const err = (await importPlugin({ file, source: "path" }).catch((e: EngineError) => e)) as EngineError;
    expect(err.code).to.equal("ENGINE_ERR_PLUGIN_INVALID");
    expect(err.message).to.match(/manifest\.options\.x\.type should be/);
  });
});
