/**
 * `Config` of `GET /images/{name}/json` as Docker's daemon shows it at a given API version. An
 * image's stored config leaves out what it does not set, but Docker's inspect always listed
 * some fields, at their empty values: every container.Config field images carry up to API 1.49,
 * and from 1.50 the eight that never had `omitempty` (Cmd, Entrypoint, Env, Labels, OnBuild,
 * User, Volumes, WorkingDir). Clients read them as present: docker-py's tests index
 * `Config['OnBuild']`. What the image sets is kept; a missing config shows the empty fields.
 */
import type { ContainerConfig } from "../../core/images/image-config.js";
import { compareApiVersions } from "../../core/version.js";

/** The fields that never had `omitempty` (listed at every version this daemon serves). */
const ALWAYS: Readonly<Record<string, unknown>> = {
  Cmd: null,
  Entrypoint: null,
  Env: null,
  Labels: null,
  OnBuild: null,
  User: "",
  Volumes: null,
  WorkingDir: "",
};

/** The others, listed up to API 1.49 (dropped from image configs in 1.50). */
const UP_TO_1_49: Readonly<Record<string, unknown>> = {
  AttachStderr: false,
  AttachStdin: false,
  AttachStdout: false,
  Domainname: "",
  Hostname: "",
  Image: "",
  OpenStdin: false,
  StdinOnce: false,
  Tty: false,
};

/**
 * What an image config is from API 1.50 (Docker's DockerOCIImageConfig): the OCI image config's
 * fields and Docker's three beside them. A committed image's config keeps the container's other
 * fields (Hostname, Tty, Image...), which those versions do not show.
 */
const IMAGE_CONFIG_KEYS = new Set([
  "User", "ExposedPorts", "Env", "Entrypoint", "Cmd", "Volumes", "WorkingDir", "Labels", "StopSignal", "ArgsEscaped",
  "Healthcheck", "OnBuild", "Shell",
]);

export function inspectConfig(config: ContainerConfig | null | undefined, apiVersion: string): Record<string, unknown> {
  if (compareApiVersions(apiVersion, "1.50") < 0) return { ...UP_TO_1_49, ...ALWAYS, ...(config ?? {}) };
  return { ...ALWAYS, ...Object.fromEntries(Object.entries(config ?? {}).filter(([key]) => IMAGE_CONFIG_KEYS.has(key))) };
}
