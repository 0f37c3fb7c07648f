/**
 * The image configuration (OCI image config / Docker image JSON). Its sha256 digest, taken over
 * the exact bytes, is the image ID; it lists the layers' diff IDs in `rootfs.diff_ids`.
 */
import typia from "typia";
import { errors } from "../errors.js";

export interface ContainerConfig {
  User?: string;
  ExposedPorts?: Record<string, object>;
  Env?: string[] | null;
  Entrypoint?: string[] | null;
  Cmd?: string[] | null;
  Volumes?: Record<string, object> | null;
  WorkingDir?: string;
  Labels?: Record<string, string> | null;
  StopSignal?: string;
  [key: string]: unknown;
}

export interface HistoryEntry {
  created?: string;
  created_by?: string;
  author?: string;
  comment?: string;
  empty_layer?: boolean;
}

export interface ImageConfig {
  architecture?: string;
  os?: string;
  variant?: string;
  created?: string;
  author?: string;
  comment?: string;
  docker_version?: string;
  config?: ContainerConfig;
  rootfs: { type: string; diff_ids: string[] };
  history?: HistoryEntry[];
  [key: string]: unknown;
}

const validate = typia.createValidate<ImageConfig>();

/**
 * A null where the config has a value is read as no value, as Go's decoder (Docker's) reads it:
 * `"created":null`, `"diff_ids":null` (no layers), a history entry's null fields. Only the parsed
 * copy changes; the bytes, whose digest is the image's ID, stay as they came.
 */
function withoutNulls(json: unknown): unknown {
  if (!json || typeof json !== "object" || Array.isArray(json)) return json;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(json)) if (value !== null) out[key] = value;
  const rootfs = out.rootfs as Record<string, unknown> | undefined;
  if (rootfs && typeof rootfs === "object" && !Array.isArray(rootfs) && rootfs.diff_ids === null) out.rootfs = { ...rootfs, diff_ids: [] };
  if (Array.isArray(out.history)) out.history = out.history.map((entry: unknown) => withoutNulls(entry));
  return out;
}

export function parseImageConfig(bytes: Buffer, where: string): ImageConfig {
  let json: unknown;
  try {
    json = withoutNulls(JSON.parse(bytes.toString("utf8")));
  } catch (err) {
    throw errors.imageInvalidArchive(`${where} is not JSON: ${(err as Error).message}`);
  }
  const checked = validate(json);
  if (!checked.success) {
    const e = checked.errors[0];
    throw errors.imageInvalidArchive(`${where}: ${e.path.replace("$input", "config")} should be ${e.expected}`);
  }
  if (checked.data.rootfs.type !== "layers") throw errors.imageInvalidArchive(`${where}: rootfs.type must be "layers"`);
  for (const d of checked.data.rootfs.diff_ids) {
    if (!/^sha256:[a-f0-9]{64}$/.test(d)) throw errors.imageInvalidArchive(`${where}: bad diff ID ${d}`);
  }
  return checked.data;
}
