// Writes dist/build-info.json: the commit and time of this build, for `engined --version`
// and GET /version.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";

let commit = "unknown";
try {
  commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
} catch {
  // not a git checkout
}
writeFileSync(new URL("../dist/build-info.json", import.meta.url), JSON.stringify({ commit, time: new Date().toISOString() }) + "\n");
