/**
 * The OCI bundle of a container: `<bundle>/config.json`, written after the spec went through
 * the `processSpec` waterfall; and the runtime arguments the daemon's configuration asks for.
 */
import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { OciSpec, ProcessSpec, SpecContext } from "../../core/contracts/runtime.js";
import type { DaemonConfig } from "../../core/options/table.js";
import { baseSpec } from "./spec.js";

/** RLIM_INFINITY as the runtime reads it (a uint64 with all bits set). */
const RLIM_INFINITY = "18446744073709551615";
const INFINITY_MARK = "\u0000rlim-infinity\u0000";

/** config.json text: rlimits of -1 become RLIM_INFINITY, which a JS number cannot hold. */
export function serializeSpec(spec: OciSpec): string {
  const text = JSON.stringify(
    spec,
    function (this: unknown, key, value: unknown) {
      if ((key === "hard" || key === "soft") && value === -1 && this && typeof (this as { type?: unknown }).type === "string") {
        return INFINITY_MARK;
      }
      return value;
    },
    2,
  );
  return text.replaceAll(JSON.stringify(INFINITY_MARK), RLIM_INFINITY);
}

/**
 * Arguments of the runtime's `create` (or `run`): `--no-pivot` with ENGINE_RAMDISK (config
 * key `no-pivot-root`), for a root filesystem on a ramdisk where pivot_root(2) fails.
 */
export function runtimeArgs(config: Pick<DaemonConfig, "no-pivot-root">): string[] {
  return config["no-pivot-root"] ? ["--no-pivot"] : [];
}

export type { ProcessSpec };

/** Makes the bundle folder and writes config.json (atomically); resolves with the final spec. */
export async function writeBundle(ctx: SpecContext, processSpec?: ProcessSpec): Promise<OciSpec> {
  const base = baseSpec(ctx);
  const spec = processSpec ? await processSpec(base, ctx) : base;
  await mkdir(ctx.bundleDir, { recursive: true, mode: 0o711 });
  const file = join(ctx.bundleDir, "config.json");
  const tmp = `${file}.tmp-${process.pid}`;
  await writeFile(tmp, serializeSpec(spec), { mode: 0o600 });
  await rename(tmp, file);
  return spec;
}
