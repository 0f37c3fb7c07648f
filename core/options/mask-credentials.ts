/**
 * A URL's credentials masked as Docker's daemon masks a proxy's (daemon/config:
 * MaskCredentials): whatever user and password it names become `xxxxx:xxxxx`; a URL without
 * credentials, or a value that is no URL, is shown as it is.
 */
import type { OptionDefinition } from "./option.js";

export function maskCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/?#]*@/i, "$1xxxxx:xxxxx@");
}

/** An option's value in its `daemon.json` form, credentials masked where the option holds them. */
export function shownValue(def: OptionDefinition<unknown>, value: unknown): unknown {
  const v = def.type.toFile(value as never);
  return def.secret && typeof v === "string" ? maskCredentials(v) : v;
}
