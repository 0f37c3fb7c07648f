/** Imported by every suite that starts daemons: no daemon or temporary folder outlives the run. */
import { cleanUpAfterTests } from "./engined.js";

after(async () => {
  await cleanUpAfterTests();
});
