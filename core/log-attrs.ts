/**
 * What Docker's log drivers take from a container besides its output: the `tag` template
 * (`loggerutils.ParseLogTag`) and the extra attributes that `labels`, `labels-regex`, `env`
 * and `env-regex` select (`logger.Info.ExtraAttributes`). Shared by the drivers that send
 * them elsewhere (syslog, journald); errors carry Docker's words, since they reach the client.
 */
import type { LoggerContext } from "./contracts/log.js";

/** Docker's default tag: the short container id. */
export const DEFAULT_TAG_TEMPLATE = "{{.ID}}";

const ACTION = /\{\{(.*?)\}\}/g;

function tagFields(ctx: LoggerContext): Record<string, string> {
  const imageHex = ctx.imageId.includes(":") ? ctx.imageId.slice(ctx.imageId.indexOf(":") + 1) : ctx.imageId;
  return {
    ID: ctx.containerId.slice(0, 12),
    FullID: ctx.containerId,
    Name: ctx.containerName.replace(/^\//, ""),
    ImageID: imageHex.slice(0, 12),
    ImageFullID: ctx.imageId,
    ImageName: ctx.imageName,
    DaemonName: "docker",
  };
}

/**
 * The `tag` option expanded (Docker's default `{{.ID}}` when unset or empty). Only field
 * actions (`{{.Name}}`) are understood; an unknown field is an Error with Go's template words,
 * as Docker reports it when the logger is made (container start), not at create.
 */
export function logTag(ctx: LoggerContext, template = ctx.options.tag || DEFAULT_TAG_TEMPLATE): string {
  const fields = tagFields(ctx);
  return template.replace(ACTION, (_whole, inner: string, offset: number) => {
    const action = inner.trim();
    const m = /^\.(\w+)$/.exec(action);
    const col = offset + 2;
    if (!m) throw new Error(`template: log-tag:1:${col}: unsupported action {{${inner}}} (only fields such as {{.Name}})`);
    if (!Object.hasOwn(fields, m[1])) {
      throw new Error(`template: log-tag:1:${col}: executing "log-tag" at <.${m[1]}>: can't evaluate field ${m[1]} in type *logger.Info`);
    }
    return fields[m[1]];
  });
}

/** Go's `regexp.Compile` error, roughly: the option's value is checked when the logger is made. */
function regex(raw: string): RegExp {
  try {
    return new RegExp(raw);
  } catch (err) {
    throw new Error(`error parsing regexp: ${(err as Error).message}`);
  }
}

/**
 * Docker's `ExtraAttributes(keyMod)`: the labels named in `labels` (comma-separated) and those
 * matching `labels-regex`, then the environment variables named in `env` and matching
 * `env-regex`; `keyMod` rewrites each key (journald upper-cases and sanitizes them).
 */
export function extraAttributes(ctx: LoggerContext, keyMod: (key: string) => string = (k) => k): Record<string, string> {
  const out: Record<string, string> = {};
  const o = ctx.options;
  if (o.labels) for (const key of o.labels.split(",")) if (Object.hasOwn(ctx.labels, key)) out[keyMod(key)] = ctx.labels[key];
  if (o["labels-regex"]) {
    const re = regex(o["labels-regex"]);
    for (const [k, v] of Object.entries(ctx.labels)) if (re.test(k)) out[keyMod(k)] = v;
  }
  const env = new Map<string, string>();
  for (const e of ctx.env) {
    const eq = e.indexOf("=");
    if (eq > 0) env.set(e.slice(0, eq), e.slice(eq + 1));
  }
  if (o.env) for (const key of o.env.split(",")) if (env.has(key)) out[keyMod(key)] = env.get(key)!;
  if (o["env-regex"]) {
    const re = regex(o["env-regex"]);
    for (const [k, v] of env) if (re.test(k)) out[keyMod(k)] = v;
  }
  return out;
}
