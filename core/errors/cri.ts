/**
 * The error catalogue, the Container Runtime Interface (core/errors.ts assembles it). The CRI
 * server answers gRPC, not HTTP: host/cri/grpc-status.ts turns the status below into a gRPC
 * code (400 INVALID_ARGUMENT, 404 NOT_FOUND, 409 FAILED_PRECONDITION, except a name in use:
 * ALREADY_EXISTS; 501 UNIMPLEMENTED; others INTERNAL), with the message as the status detail.
 */
import { define } from "./define.js";

export const criErrors = {
  criInvalidArgument: define("ENGINE_ERR_CRI_INVALID_ARGUMENT", 400, (field: string, why: string) => `invalid ${field}: ${why}`),
  criSandboxNotFound: define("ENGINE_ERR_CRI_SANDBOX_NOT_FOUND", 404, (id: string) => `pod sandbox ${JSON.stringify(id)} not found`),
  criContainerNotFound: define("ENGINE_ERR_CRI_CONTAINER_NOT_FOUND", 404, (id: string) => `container ${JSON.stringify(id)} not found`),
  criTargetNotFound: define("ENGINE_ERR_CRI_TARGET_NOT_FOUND", 404, (field: string, id: string) => `${field}: container ${JSON.stringify(id)} not found`),
  criImageNotFound: define("ENGINE_ERR_CRI_IMAGE_NOT_FOUND", 404, (ref: string) => `image ${JSON.stringify(ref)} not found: pull it first`),
  criNameInUse: define(
    "ENGINE_ERR_CRI_NAME_IN_USE",
    409,
    (kind: string, name: string, id: string) => `the ${kind} name ${JSON.stringify(name)} is already reserved for ${id}`,
  ),
  criSandboxNotReady: define("ENGINE_ERR_CRI_SANDBOX_NOT_READY", 409, (id: string) => `pod sandbox ${id} is not ready: it was stopped`),
  criContainerState: define("ENGINE_ERR_CRI_CONTAINER_STATE", 409, (id: string, state: string, want: string) => `container ${id} is ${state}: ${want}`),
  criNetworkSetup: define("ENGINE_ERR_CRI_NETWORK_SETUP", 500, (plugin: string, detail: string) => `pod network (CNI plugin ${plugin}): ${detail}`),
  criNetworkConfig: define("ENGINE_ERR_CRI_NETWORK_CONFIG", 500, (detail: string) => `pod network configuration: ${detail}`),
  criPodInit: define("ENGINE_ERR_CRI_POD_INIT", 500, (why: string) => `pod process namespace: ${why}`),
  criUnimplemented: define("ENGINE_ERR_CRI_UNIMPLEMENTED", 501, (field: string, what: string) => `${field}: ${what} not supported by this runtime yet`),
  criRuntimeHandler: define("ENGINE_ERR_CRI_RUNTIME_HANDLER", 400, (name: string) => `runtime handler ${JSON.stringify(name)} is not one this runtime serves`),
  criStreamNotFound: define("ENGINE_ERR_CRI_STREAM_NOT_FOUND", 404, () => "no streaming session for this URL: its token was used already or has expired"),
  criStreamLimit: define("ENGINE_ERR_CRI_STREAM_LIMIT", 429, (max: number) => `too many streaming requests waiting for their client (at most ${max})`),
  criStreamUpgrade: define("ENGINE_ERR_CRI_STREAM_UPGRADE", 400, (why: string) => `unable to upgrade: ${why}`),
  criStreamProtocol: define(
    "ENGINE_ERR_CRI_STREAM_PROTOCOL",
    403,
    (client: string, server: string) => `unable to upgrade: unable to negotiate protocol: client supports [${client}], server accepts [${server}]`,
  ),
  criPortForward: define("ENGINE_ERR_CRI_PORT_FORWARD", 500, (port: number, pod: string, why: string) => `error forwarding port ${port} to pod ${pod}: ${why}`),
} as const;
