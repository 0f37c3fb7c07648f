/**
 * The `changes` of `docker import` / `docker commit`: Dockerfile instructions applied to an
 * image's container configuration (CMD, ENTRYPOINT, ENV, EXPOSE, HEALTHCHECK, LABEL, STOPSIGNAL,
 * USER, VOLUME, WORKDIR).
 */
import { errors } from "../../core/errors.js";
import { parseHealthcheckInstruction } from "../../core/containers/healthcheck.js";
import type { ContainerConfig } from "../../core/images/image-config.js";

/** `["a","b"]` (exec form) or `a b` (shell form, run by /bin/sh -c). */
function command(args: string, change: string): string[] {
  if (args.startsWith("[")) {
    try {
      const list = JSON.parse(args) as unknown;
      if (Array.isArray(list) && list.every((x) => typeof x === "string")) return list;
    } catch {
      // fall through to the error
    }
    throw errors.imageInvalidChange(change, "expected a JSON array of strings");
  }
  return ["/bin/sh", "-c", args];
}

/** `k=v k2="v 2"` pairs, or the old `k v` form. */
function pairs(args: string, change: string): [string, string][] {
  if (!args.includes("=")) {
    const space = args.indexOf(" ");
    if (space <= 0) throw errors.imageInvalidChange(change, "expected key=value");
    return [[args.slice(0, space), args.slice(space + 1).trim()]];
  }
  const out: [string, string][] = [];
  for (const m of args.matchAll(/([^\s=]+)=("(?:[^"\\]|\\.)*"|\S*)/g)) {
    out.push([m[1], m[2].startsWith('"') ? (JSON.parse(m[2]) as string) : m[2]]);
  }
  return out;
}

export function applyChanges(base: ContainerConfig, changes: readonly string[]): ContainerConfig {
  const config: ContainerConfig = structuredClone(base);
  for (const change of changes) {
    const m = /^\s*([A-Za-z]+)\s+(.*\S)\s*$/.exec(change);
    if (!m) throw errors.imageInvalidChange(change, "expected <INSTRUCTION> <arguments>");
    const [, instruction, args] = m;
    switch (instruction.toUpperCase()) {
      case "CMD":
        config.Cmd = command(args, change);
        break;
      case "ENTRYPOINT":
        config.Entrypoint = command(args, change);
        break;
      case "ENV": {
        const env = [...(config.Env ?? [])];
        for (const [k, v] of pairs(args, change)) {
          const at = env.findIndex((e) => e.startsWith(`${k}=`));
          if (at >= 0) env[at] = `${k}=${v}`;
          else env.push(`${k}=${v}`);
        }
        config.Env = env;
        break;
      }
      case "LABEL":
        config.Labels = { ...(config.Labels ?? {}), ...Object.fromEntries(pairs(args, change)) };
        break;
      case "EXPOSE":
        config.ExposedPorts = { ...(config.ExposedPorts ?? {}) };
        for (const port of args.split(/\s+/)) {
          if (!/^\d+(-\d+)?(\/(tcp|udp|sctp))?$/.test(port)) throw errors.imageInvalidChange(change, `invalid port ${port}`);
          config.ExposedPorts[port.includes("/") ? port : `${port}/tcp`] = {};
        }
        break;
      case "USER":
        config.User = args;
        break;
      case "HEALTHCHECK":
        try {
          config.Healthcheck = parseHealthcheckInstruction(args);
        } catch (err) {
          throw errors.imageInvalidChange(change, (err as Error).message);
        }
        break;
      case "STOPSIGNAL":
        config.StopSignal = args;
        break;
      case "WORKDIR":
        config.WorkingDir = args;
        break;
      case "VOLUME": {
        const paths = args.startsWith("[") ? command(args, change) : args.split(/\s+/);
        config.Volumes = { ...(config.Volumes ?? {}), ...Object.fromEntries(paths.map((p) => [p, {}])) };
        break;
      }
      default:
        throw errors.imageInvalidChange(change, `${instruction} is not allowed; use CMD, ENTRYPOINT, ENV, EXPOSE, HEALTHCHECK, LABEL, STOPSIGNAL, USER, VOLUME or WORKDIR`);
    }
  }
  return config;
}
