/**
 * A RunPodSandbox request checked field by field, before anything is made: every refusal is
 * InvalidArgument naming the field as the CRI message spells it (`config.metadata.name`,
 * `config.port_mappings[0].container_port`). What passes is the sandbox's settings, in the
 * shape the rest of the sandbox code reads.
 */
import { isIP } from "node:net";
import { errors } from "../../../core/errors.js";

export type NamespaceMode = "POD" | "CONTAINER" | "NODE" | "TARGET";

export interface PortMappingMsg {
  protocol: "TCP" | "UDP" | "SCTP";
  containerPort: number;
  hostPort: number;
  hostIp: string;
}

export interface PodSandboxConfigMsg {
  metadata: { name: string; uid: string; namespace: string; attempt: number } | null;
  hostname: string;
  logDirectory: string;
  dnsConfig: { servers: string[]; searches: string[]; options: string[] } | null;
  portMappings: PortMappingMsg[];
  labels: Record<string, string>;
  annotations: Record<string, string>;
  linux: {
    cgroupParent: string;
    securityContext: { namespaceOptions: { network: NamespaceMode; pid: NamespaceMode; ipc: NamespaceMode; usernsOptions?: { mode: NamespaceMode } | null } | null; privileged: boolean } | null;
    sysctls: Record<string, string>;
  } | null;
}

export interface SandboxSettings {
  metadata: { name: string; uid: string; namespace: string; attempt: number };
  hostname: string;
  logDirectory: string;
  dns: { servers: string[]; searches: string[]; options: string[] } | null;
  portMappings: PortMappingMsg[];
  labels: Record<string, string>;
  annotations: Record<string, string>;
  namespaces: { network: NamespaceMode; pid: NamespaceMode; ipc: NamespaceMode };
  cgroupParent: string;
  sysctls: Record<string, string>;
  privileged: boolean;
}

const bad = (field: string, why: string) => errors.criInvalidArgument(field, why);
/** A host name (RFC 1123: labels of letters, digits and inner hyphens, 63 each, 253 in all). */
const HOSTNAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** Sysctls a pod may set: those its own network, IPC or UTS namespace holds. */
export function sysctlNamespace(key: string): "net" | "ipc" | "uts" | undefined {
  if (key.startsWith("net.")) return "net";
  if (/^kernel\.(shm[a-z_]*|msg[a-z_]*|sem)$/.test(key) || key.startsWith("fs.mqueue.")) return "ipc";
  if (key === "kernel.domainname") return "uts";
  return undefined;
}

/**
 * The pod's cgroup parent as the runtime takes it. Under the systemd cgroup driver a kubelet sends
 * a path of slices (`/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod<uid>.slice`;
 * critest `/test.slice`), while runc's systemd cgroups (and the runtime plugin's check) want one
 * slice name: the path's last, whose dashes systemd expands to the same hierarchy, as containerd's
 * getCgroupsPath takes it. Under cgroupfs the path is kept as given.
 */
export function runtimeCgroupParent(parent: string, driver: "cgroupfs" | "systemd"): string {
  if (driver !== "systemd") return parent;
  const last = parent.split("/").filter(Boolean).pop() ?? "";
  return last.endsWith(".slice") ? last : parent;
}

function checkPorts(ports: readonly PortMappingMsg[]): void {
  ports.forEach((p, i) => {
    const at = `config.port_mappings[${i}]`;
    if (!(p.containerPort >= 1 && p.containerPort <= 65535)) throw bad(`${at}.container_port`, `${p.containerPort} is not a port (1-65535)`);
    if (!(p.hostPort >= 0 && p.hostPort <= 65535)) throw bad(`${at}.host_port`, `${p.hostPort} is not a port (0-65535)`);
    if (p.hostIp && !isIP(p.hostIp)) throw bad(`${at}.host_ip`, `${JSON.stringify(p.hostIp)} is not an IP address`);
  });
}

export function checkSandboxConfig(config: PodSandboxConfigMsg | null): SandboxSettings {
  if (!config) throw bad("config", "the pod sandbox configuration is required");
  const m = config.metadata;
  if (!m) throw bad("config.metadata", "the pod's name, uid and namespace are required");
  for (const key of ["name", "uid", "namespace"] as const) if (!m[key]) throw bad(`config.metadata.${key}`, "must not be empty");
  const ns = config.linux?.securityContext?.namespaceOptions ?? { network: "POD" as const, pid: "CONTAINER" as const, ipc: "POD" as const };
  if (ns.network !== "POD" && ns.network !== "NODE") throw bad("config.linux.security_context.namespace_options.network", `${ns.network} is not a mode a pod's network can have (POD or NODE)`);
  if (ns.ipc !== "POD" && ns.ipc !== "NODE") throw bad("config.linux.security_context.namespace_options.ipc", `${ns.ipc} is not a mode a pod's IPC can have (POD or NODE)`);
  // POD (the proto's default: an unset field) gives the pod an init holding a PID namespace its
  // containers share (pod-init.ts); without namespace options at all, each container has its own
  if (ns.pid === "TARGET") throw bad("config.linux.security_context.namespace_options.pid", "TARGET is for containers, not for a pod");
  // no user namespaces here (Status says user_namespaces false for every handler): a pod asking
  // for one of its own (hostUsers: false) is refused, not run in the node's with root as root
  const userns = config.linux?.securityContext?.namespaceOptions?.usernsOptions;
  if (userns && userns.mode !== "NODE") throw bad("config.linux.security_context.namespace_options.userns_options.mode", `${userns.mode}: this runtime has no user namespaces (only NODE)`);
  const hostNetwork = ns.network === "NODE";
  if (config.hostname && !HOSTNAME.test(config.hostname)) throw bad("config.hostname", `${JSON.stringify(config.hostname)} is not a host name`);
  if (config.logDirectory && !config.logDirectory.startsWith("/")) throw bad("config.log_directory", "must be an absolute path");
  const dns = config.dnsConfig;
  dns?.servers.forEach((s, i) => {
    if (!isIP(s)) throw bad(`config.dns_config.servers[${i}]`, `${JSON.stringify(s)} is not an IP address`);
  });
  checkPorts(config.portMappings);
  const sysctls = config.linux?.sysctls ?? {};
  for (const key of Object.keys(sysctls)) {
    const where = sysctlNamespace(key);
    if (!where) throw bad(`config.linux.sysctls[${key}]`, "not a sysctl of the pod's own namespaces (net.*, kernel.shm*, kernel.msg*, kernel.sem, fs.mqueue.*, kernel.domainname)");
    if ((where === "net" && hostNetwork) || (where === "ipc" && ns.ipc === "NODE")) throw bad(`config.linux.sysctls[${key}]`, "the pod shares this namespace with the node");
  }
  return {
    metadata: { name: m.name, uid: m.uid, namespace: m.namespace, attempt: m.attempt ?? 0 },
    hostname: config.hostname,
    logDirectory: config.logDirectory,
    dns: dns && (dns.servers.length || dns.searches.length || dns.options.length) ? { servers: dns.servers, searches: dns.searches, options: dns.options } : null,
    portMappings: config.portMappings,
    labels: config.labels ?? {},
    annotations: config.annotations ?? {},
    namespaces: { network: ns.network, pid: ns.pid, ipc: ns.ipc },
    cgroupParent: config.linux?.cgroupParent ?? "",
    sysctls,
    privileged: config.linux?.securityContext?.privileged ?? false,
  };
}

/** The name a sandbox reserves (as the kubelet's dockershim and containerd make it): unique among live sandboxes. */
export function sandboxName(s: SandboxSettings): string {
  const m = s.metadata;
  return `k8s_POD_${m.name}_${m.namespace}_${m.uid}_${m.attempt}`;
}
