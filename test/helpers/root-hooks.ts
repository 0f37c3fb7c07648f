/** Imported by every suite that starts daemons: none outlives the run. */
import { stopAllDaemons } from "./engined.js";

after(async () => {
  await stopAllDaemons();
});
