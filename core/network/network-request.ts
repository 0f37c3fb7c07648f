/**
 * The request bodies of the networks API, as the Docker Engine API defines them (the fields this
 * daemon reads; others are accepted and ignored, as Docker ignores what it does not use). Every
 * optional field may be null too: the Docker SDK for Python sends null for what it leaves out.
 */

/** One entry of `IPAM.Config`. */
export interface IpamConfigRequest {
  Subnet?: string | null;
  IPRange?: string | null;
  Gateway?: string | null;
  AuxiliaryAddresses?: Record<string, string> | null;
}

/** `POST /networks/create`. */
export interface NetworkCreateRequest {
  /** Missing is a blank name, refused with Docker's message. */
  Name?: string | null;
  /** Deprecated: a duplicate name is always refused. */
  CheckDuplicate?: boolean | null;
  Driver?: string | null;
  Scope?: string | null;
  Internal?: boolean | null;
  Attachable?: boolean | null;
  Ingress?: boolean | null;
  ConfigOnly?: boolean | null;
  ConfigFrom?: { Network?: string | null } | null;
  IPAM?: {
    Driver?: string | null;
    Config?: IpamConfigRequest[] | null;
    Options?: Record<string, string> | null;
  } | null;
  EnableIPv4?: boolean | null;
  EnableIPv6?: boolean | null;
  Options?: Record<string, string> | null;
  Labels?: Record<string, string> | null;
  [key: string]: unknown;
}

/** `EndpointsConfig` entries of a container create, and `EndpointConfig` of a connect. */
export interface EndpointConfigRequest {
  IPAMConfig?: { IPv4Address?: string | null; IPv6Address?: string | null; LinkLocalIPs?: string[] | null } | null;
  Links?: string[] | null;
  Aliases?: string[] | null;
  MacAddress?: string | null;
  DriverOpts?: Record<string, string> | null;
  /** API 1.48: of a container's networks, the one of the highest priority gives its default route. */
  GwPriority?: number | null;
  [key: string]: unknown;
}

/** `POST /networks/{id}/connect` (no Container: Docker's "invalid name or ID supplied"). */
export interface NetworkConnectRequest {
  Container?: string;
  EndpointConfig?: EndpointConfigRequest | null;
}

/** `POST /networks/{id}/disconnect`. */
export interface NetworkDisconnectRequest {
  Container?: string;
  Force?: boolean | null;
}
