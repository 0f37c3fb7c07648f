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

export function parseImageConfig(bytes: Buffer, where: string): ImageConfig {
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString("utf8"));
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
