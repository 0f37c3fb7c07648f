/**
 * What the Docker CLI checks before it runs `run` or `create`: a flag newer than the API version
 * agreed with the daemon, or one for another daemon OS (`--cpu-count` and the other Windows
 * ones), is refused with its message, all such flags at once, status 1. The daemon's OS is
 * asked (`/_ping`) only when such a flag was given.
 */
import { ExitError } from "../command.js";
import type { Connection } from "../connection.js";
import type { Parsed } from "../flags.js";
import { refuseContentTrust } from "./content-trust.js";
import { FLAG_API_VERSIONS, WINDOWS_ONLY_FLAGS } from "./container-flags.js";

function older(a: string, b: string): boolean {
  const [x, y] = [a, b].map((v) => v.split(".").map(Number));
  return x[0] < y[0] || (x[0] === y[0] && x[1] < y[1]);
}

async function daemonOs(conn: Connection): Promise<string> {
  const res = await conn.request("GET", "/_ping", { unversioned: true });
  res.body.resume();
  return String(res.headers.ostype ?? "");
}

export async function checkFlagSupport(conn: Connection, input: Parsed): Promise<void> {
  refuseContentTrust(input.flags);
  const errors: string[] = [];
  let os: string | undefined;
  // in name order, as pflag visits them
  for (const name of [...input.given].sort()) {
    const needs = FLAG_API_VERSIONS[name];
    if (needs) {
      const version = await conn.apiVersion();
      if (older(version, needs)) {
        errors.push(`"--${name}" requires API version ${needs}, but the Docker daemon API version is ${version}`);
        continue;
      }
    }
    if (WINDOWS_ONLY_FLAGS.includes(name)) {
      os ??= await daemonOs(conn);
      if (os !== "windows") errors.push(`"--${name}" is only supported on a Docker daemon running on windows, but the Docker daemon is running on ${os}`);
    }
  }
  if (errors.length) throw new ExitError(1, errors.join("\n"));
}
