/** Imported by every suite that starts daemons: no daemon or temporary folder outlives the run. */
import { cleanUpAfterTests } from "./engined.js";

after(async function () {
  // everything a whole run made, in each suite process: hundreds of folders (image layers,
  // registries, daemons' roots) on a loaded machine take longer than a test's time
  this.timeout(600_000);
  await cleanUpAfterTests();
});
