/**
 * Networks of the list (`GET /networks`) as `docker network ls` shows them: the fields a template
 * sees (.ID, .Name, .Driver, .Scope, .IPv4, .IPv6, .Internal, .Labels, .Label "k", .CreatedAt)
 * and the CLI's natural ordering by name ("n2" before "n10").
 */
import { goTimeString } from "./human.js";
import { truncateId } from "./render.js";
import { struct, type GoStruct } from "./template.js";

export interface NetworkSummary {
  Name: string;
  Id: string;
  Created?: string;
  Scope?: string;
  Driver?: string;
  EnableIPv4?: boolean;
  EnableIPv6?: boolean;
  Internal?: boolean;
  Labels?: Record<string, string> | null;
}

export const NETWORK_HEADERS: Record<string, string> = {
  ID: "NETWORK ID",
  Name: "NAME",
  Driver: "DRIVER",
  Scope: "SCOPE",
  IPv4: "IPV4",
  IPv6: "IPV6",
  Internal: "INTERNAL",
  Labels: "LABELS",
  CreatedAt: "CREATED AT",
};

export const NETWORK_TYPE = "*network.networkContext";

export function networkContext(n: NetworkSummary, trunc: boolean): GoStruct {
  return struct(NETWORK_TYPE, {
    ID: () => (trunc ? truncateId(n.Id) : n.Id),
    Name: () => n.Name,
    Driver: () => n.Driver ?? "",
    Scope: () => n.Scope ?? "",
    IPv4: () => String(n.EnableIPv4 ?? false),
    IPv6: () => String(n.EnableIPv6 ?? false),
    Internal: () => String(n.Internal ?? false),
    Labels: () =>
      Object.entries(n.Labels ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .sort() // Go's map order is random; sorted is one of its orders, and stable
        .join(","),
    Label: (name: string) => n.Labels?.[name] ?? "",
    CreatedAt: () => goTimeString(n.Created ?? "0001-01-01T00:00:00Z"),
  });
}

/** The natural order of names (digit runs compare as numbers), as the CLI sorts networks. */
export function naturalLess(a: string, b: string): boolean {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const da = /\d/.test(a[i]);
    const db = /\d/.test(b[j]);
    if (da && db) {
      let ei = i;
      while (ei < a.length && /\d/.test(a[ei])) ei++;
      let ej = j;
      while (ej < b.length && /\d/.test(b[ej])) ej++;
      const na = a.slice(i, ei).replace(/^0+/, "");
      const nb = b.slice(j, ej).replace(/^0+/, "");
      if (na.length !== nb.length) return na.length < nb.length;
      if (na !== nb) return na < nb;
      i = ei;
      j = ej;
      continue;
    }
    if (a[i] !== b[j]) return a[i] < b[j];
    i++;
    j++;
  }
  return a.length - i < b.length - j;
}
