/**
 * `-p [IP:][HOST_PORT:]CONTAINER_PORT[/PROTO]` and `--expose PORT[-END][/PROTO]` as the Docker
 * CLI reads them: ranges expand to one binding per port, a single container port may take a
 * host range (the daemon picks in it), and the errors are the Docker CLI's.
 */

export interface PortBinding {
  HostIp: string;
  HostPort: string;
}

export interface PortMapping {
  /** `80/tcp` */
  port: string;
  binding: PortBinding;
}

function portRange(text: string): [number, number] {
  if (text === "") throw new Error("empty string specified for ports");
  const [a, b] = text.includes("-") ? text.split("-", 2) : [text, text];
  const start = port16(a);
  const end = port16(b);
  if (end < start) throw new Error(`invalid range specified for port: ${text}`);
  return [start, end];
}

function port16(s: string): number {
  if (!/^\d+$/.test(s) || Number(s) > 65535) throw new Error(`invalid port: ${s}`);
  return Number(s);
}

function splitProto(text: string): [string, string] {
  const slash = text.indexOf("/");
  if (slash < 0) return [text, "tcp"];
  return [text.slice(0, slash), text.slice(slash + 1).toLowerCase() || "tcp"];
}

function checkProto(proto: string): void {
  if (!["tcp", "udp", "sctp"].includes(proto)) throw new Error(`invalid proto: ${proto}`);
}

/**
 * `-p published=8080,target=80[,protocol=udp]` in the short form (`8080:80/udp`), as the Docker
 * CLI turns it before reading it; a value without `=` is already short.
 */
export function standardPublish(raw: string): string {
  if (!raw.includes("=")) return raw;
  const params: Record<string, string> = { protocol: "tcp" };
  for (const param of raw.split(",")) {
    const eq = param.indexOf("=");
    if (eq <= 0) throw new Error(`invalid publish opts format (should be name=value but got '${param}')`);
    params[param.slice(0, eq)] = param.slice(eq + 1);
  }
  return `${params.published ?? ""}:${params.target ?? ""}/${params.protocol}`;
}

export function parsePublish(raw: string): PortMapping[] {
  const parts = raw.split(":");
  const n = parts.length;
  let ip = n >= 3 ? parts.slice(0, n - 2).join(":") : "";
  const hostPort = n >= 2 ? parts[n - 2] : "";
  const [containerPort, proto] = splitProto(parts[n - 1]);
  if (ip.startsWith("[") && ip.endsWith("]")) ip = ip.slice(1, -1);
  if (ip !== "" && !isIp(ip)) throw new Error(`invalid IP address: ${ip}`);
  if (containerPort === "") throw new Error(`no port specified: ${raw}<empty>`);
  let start: number, end: number;
  try {
    [start, end] = portRange(containerPort);
  } catch {
    throw new Error(`invalid containerPort: ${containerPort}`);
  }
  let hostStart = 0;
  let hostEnd = 0;
  if (hostPort !== "") {
    try {
      [hostStart, hostEnd] = portRange(hostPort);
    } catch {
      throw new Error(`invalid hostPort: ${hostPort}`);
    }
    if (end - start !== hostEnd - hostStart && end !== start) {
      throw new Error(`invalid ranges specified for container and host Ports: ${containerPort} and ${hostPort}`);
    }
  }
  checkProto(proto);
  const count = end - start + 1;
  const out: PortMapping[] = [];
  for (let i = 0; i < count; i++) {
    let host = "";
    if (hostPort !== "") {
      host = String(hostStart + i);
      if (count === 1 && hostStart !== hostEnd) host += `-${hostEnd}`;
    }
    out.push({ port: `${start + i}/${proto}`, binding: { HostIp: ip, HostPort: host } });
  }
  return out;
}

/** `--expose 80`, `--expose 8000-8010/udp`: the ports, as `80/tcp` keys. */
export function parseExpose(raw: string): string[] {
  if (raw.includes(":")) throw new Error(`invalid port format for --expose: ${raw}`);
  const [text, proto] = splitProto(raw);
  let start: number, end: number;
  try {
    [start, end] = portRange(text);
  } catch (e) {
    throw new Error(`invalid range format for --expose: ${raw}, error: ${(e as Error).message}`);
  }
  checkProto(proto);
  return Array.from({ length: end - start + 1 }, (_, i) => `${start + i}/${proto}`);
}

function isIp(s: string): boolean {
  if (/^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.test(s)) return s.split(".").every((p) => Number(p) <= 255);
  return /^[0-9a-fA-F:.]+$/.test(s) && s.includes(":");
}
