/** docs/plugin-options.md is what the built-in plugins' manifests declare, and `engined --help` shows the same. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { pluginOptionsDoc } from "../core/options/plugin-options-doc.js";
import { builtinManifests } from "../host/plugins/plugin-manifests.js";
import { ROOT, runEngined } from "./helpers/engined.js";

describe("plugin options reference", () => {
  it("docs/plugin-options.md is up to date with the manifests (run scripts/plugin-options-doc.mjs after changing one)", async () => {
    const manifests = await builtinManifests(join(ROOT, "dist", "plugins"));
    expect(readFileSync(join(ROOT, "docs/plugin-options.md"), "utf8")).to.equal(pluginOptionsDoc(manifests.map((manifest) => ({ manifest, source: "built-in" }))));
  });

  it("engined --help lists each plugin's options with their types and defaults", async () => {
    const help = await runEngined(["--help"]);
    expect(help.code).to.equal(0);
    expect(help.stdout).to.include("Plugin options (declared by each plugin's manifest; docs/plugin-options.md):");
    expect(help.stdout).to.match(/ {2}storage driver overlay2 \(built-in; --storage-opt\):\n {4}overlay2\.size size +Default maximum size/);
    expect(help.stdout).to.match(/ {4}size size +Size of the sandbox \(writable layer\) created for a container \(default 20G\)/);
    expect(help.stdout).to.include("--storage-opt list");
  });
});
