// Runs the mocha suite (compiled to dist/test) and ends with the line CI reads:
// "N passed, N failed". Exits 1 when a test failed or none ran.
import { globSync } from "node:fs";
import Mocha from "mocha";

const grep = process.argv[2];
const mocha = new Mocha({ timeout: 60_000, slow: 5_000, reporter: "spec", ...(grep ? { grep } : {}) });
for (const file of globSync("dist/test/**/*.test.js").sort()) mocha.addFile(file);
await mocha.loadFilesAsync();
const runner = mocha.run((failures) => {
  const passes = runner.stats?.passes ?? 0;
  const pending = runner.stats?.pending ?? 0;
  const failed = Math.max(failures, runner.stats?.failures ?? 0);
  console.log(`\n${passes} passed, ${failed} failed${pending ? `, ${pending} skipped` : ""}`);
  // Exit now: a test that leaked a handle must not hang CI (the suites' after hooks have run).
  process.exit(failed > 0 || passes === 0 ? 1 : 0);
});
