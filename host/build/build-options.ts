/**
 * The options of one build (`POST /build`'s query, as the route reads it), with Docker's
 * defaults: `rm` on, `forcerm` off, the cache used, no pull.
 */
import type { HostConfig } from "../../core/containers/container-config.js";
import type { Platform } from "../registry/manifests.js";
import type { Credentials } from "../registry/auth.js";

export interface BuildOptions {
  /** Full references to tag the result with. */
  tags: string[];
  dockerfile: string;
  remote?: string;
  quiet: boolean;
  noCache: boolean;
  cacheFrom: string[];
  /** Pull base images even when they are local. */
  pull: boolean;
  remove: boolean;
  forceRemove: boolean;
  buildArgs: Record<string, string | null>;
  labels: Record<string, string>;
  target?: string;
  platform?: Platform;
  /** For the RUN containers: network mode, resources, shm size, extra hosts. */
  hostConfig: HostConfig;
  /** Registry credentials by host (`X-Registry-Config`), for base images. */
  credentials: (host: string) => Credentials | undefined;
}
