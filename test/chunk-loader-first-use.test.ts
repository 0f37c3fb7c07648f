/**
 * The chunk loader's built-ins at first use (core/chunk-loader.cts, AT_FIRST_USE): a chunk that
 * requires one at its top level gets a stand-in, and the built-in is loaded only when the chunk
 * first uses it. A bundle of two chunks written here, run by a launcher made as the bundling scripts
 * make theirs (scripts/chunk-bodies.mjs).
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir, ROOT, runCommand } from "./helpers/engined.js";

const NODE = join(ROOT, "node_modules/node/bin/node");

/** A bundle folder whose entry is `body`; runs it and answers its stdout. */
async function runEntry(body: string): Promise<string> {
  const dir = join(makeTempDir("engine-chunk-loader-"), "bundle");
  mkdirSync(dir);
  const loader = readFileSync(join(ROOT, "dist/core/chunk-loader.cjs"), "utf8").replace(/\n\/\/# sourceMappingURL=.*\n?$/, "\n");
  writeFileSync(join(dir, "main.cjs"), `${loader}run("entry.cjs", {});\n`);
  writeFileSync(join(dir, "entry.cjs"), body);
  const r = await runCommand(NODE, [join(dir, "main.cjs")], { env: { NODE_DISABLE_COMPILE_CACHE: "1" } });
  expect(r.stderr).to.equal("");
  expect(r.code).to.equal(0);
  return r.stdout;
}

const loaded = (name: string) => `process.moduleLoadList.includes("NativeModule ${name}")`;

describe("chunk loader: built-ins at first use", function () {
  this.timeout(60_000);

  it("loads node:child_process when the chunk first uses it, not when it requires it", async () => {
    const out = await runEntry(`
      const cp = require("node:child_process");
      const before = ${loaded("child_process")};
      const text = cp.execFileSync("/bin/echo", ["ran"], { encoding: "utf8" }).trim();
      console.log(JSON.stringify({ before, after: ${loaded("child_process")}, text, same: require("node:child_process") === cp }));
    `);
    expect(JSON.parse(out)).to.deep.equal({ before: false, after: true, text: "ran", same: true });
  });
});
