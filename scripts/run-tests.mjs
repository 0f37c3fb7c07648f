// Runs the mocha suite (compiled to dist/test) and ends with the line CI reads:
// "N passed, N failed". Exits 1 when a test failed or none ran.
//
// The whole suite (no grep) runs in ENGINE_TEST_JOBS processes at once (2 by default), each
// with every other test file: most of a test's time is spent waiting on daemons, containers
// and registries, and each file starts its own, in folders and namespaces of its own. Each
// process's report is printed whole once it ends, then the sums.
//
//   node scripts/run-tests.mjs [GREP]          GREP: a mocha --grep on the tests' titles
import { spawn } from "node:child_process";
import { globSync } from "node:fs";
import Mocha from "mocha";

const grep = process.argv[2];
const files = globSync("dist/test/**/*.test.js").sort();
const jobs = Math.max(1, Number(process.env.ENGINE_TEST_JOBS ?? 2) || 1);
const shard = process.env.ENGINE_TEST_SHARD; // "i/n": this process runs every n-th file from i

if (grep || jobs === 1 || shard !== undefined) await runHere(shard ? pick(files, shard) : files);
else await runShards();

function pick(all, spec) {
  const [i, n] = spec.split("/").map(Number);
  return all.filter((_, k) => k % n === i);
}

async function runHere(mine) {
  const mocha = new Mocha({ timeout: 60_000, slow: 5_000, reporter: "spec", ...(grep ? { grep } : {}) });
  for (const file of mine) mocha.addFile(file);
  await mocha.loadFilesAsync();
  const runner = mocha.run((failures) => {
    const passes = runner.stats?.passes ?? 0;
    const pending = runner.stats?.pending ?? 0;
    const failed = Math.max(failures, runner.stats?.failures ?? 0);
    console.log(`\n${passes} passed, ${failed} failed${pending ? `, ${pending} skipped` : ""}`);
    // Exit now: a test that leaked a handle must not hang CI (the suites' after hooks have run).
    process.exit(failed > 0 || passes === 0 ? 1 : 0);
  });
}

async function runShards() {
  const results = await Promise.all(
    Array.from({ length: jobs }, (_, i) => new Promise((resolve) => {
      const child = spawn(process.execPath, [process.argv[1]], { env: { ...process.env, ENGINE_TEST_SHARD: `${i}/${jobs}` }, stdio: ["ignore", "pipe", "pipe"] });
      const out = [];
      child.stdout.on("data", (d) => out.push(d));
      child.stderr.on("data", (d) => out.push(d));
      child.on("close", (code) => resolve({ code, text: Buffer.concat(out).toString("utf8") }));
    })),
  );
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const [i, r] of results.entries()) {
    console.log(`\n===== test process ${i + 1} of ${jobs} =====`);
    process.stdout.write(r.text);
    const m = /\n(\d+) passed, (\d+) failed(?:, (\d+) skipped)?\s*$/.exec(r.text);
    if (m) {
      passed += Number(m[1]);
      failed += Number(m[2]);
      skipped += Number(m[3] ?? 0);
    } else {
      failed += 1; // a process that ended without its summary (it crashed): a failure
      console.log(`(test process ${i + 1} ended with code ${r.code} and no summary)`);
    }
  }
  console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
  process.exit(failed > 0 || passed === 0 ? 1 : 0);
}
