/**
 * log.syslog: sends containers' output to a syslog server as Docker's syslog driver does
 * (see syslog.ts and README.md).
 */
import type { EnginePlugin } from "../../core/contracts/plugin.js";
import { manifest } from "./manifest.js";
import { createSyslogLogDriver } from "./syslog.js";

export { createSyslogLogDriver };

const plugin: EnginePlugin = {
  manifest,
  apply(hooks) {
    hooks.createLogDriver.for("syslog").tap(manifest.id, () => createSyslogLogDriver());
  },
};

export default plugin;
