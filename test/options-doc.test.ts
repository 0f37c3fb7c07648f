/** docs/options.md is what the option table says. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { optionsDoc } from "../core/options/options-doc.js";
import { ROOT } from "./helpers/engined.js";

describe("options reference", () => {
  it("docs/options.md is up to date with the table (run scripts/options-doc.mjs after changing it)", () => {
    expect(readFileSync(join(ROOT, "docs/options.md"), "utf8")).to.equal(optionsDoc());
  });
});
