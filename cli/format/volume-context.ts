/**
 * Volumes (`GET /volumes`, `/system/df`) as the Docker CLI shows them: the fields a template sees
 * (.Name, .Driver, .Scope, .Mountpoint, .Labels, .Label "k", .Links, .Size, and the cluster
 * fields, "N/A" for a local volume), and the list's natural order by name.
 */
import { naturalLess } from "./network-context.js";
import { struct, type GoStruct } from "./template.js";
import { humanSize } from "../../core/go-units.js";

export interface VolumeSummary {
  Name: string;
  Driver?: string;
  Scope?: string;
  Mountpoint?: string;
  Labels?: Record<string, string> | null;
  UsageData?: { Size: number; RefCount: number } | null;
}

export const VOLUME_HEADERS: Record<string, string> = {
  ID: "ID",
  Name: "VOLUME NAME",
  Group: "GROUP",
  Driver: "DRIVER",
  Scope: "SCOPE",
  Availability: "AVAILABILITY",
  Mountpoint: "MOUNTPOINT",
  Labels: "LABELS",
  Links: "LINKS",
  Size: "SIZE",
  Status: "STATUS",
};

export const VOLUME_TYPE = "*formatter.volumeContext";

export function volumeContext(v: VolumeSummary): GoStruct {
  return struct(VOLUME_TYPE, {
    Name: () => v.Name,
    Driver: () => v.Driver ?? "",
    Scope: () => v.Scope ?? "",
    Mountpoint: () => v.Mountpoint ?? "",
    Labels: () =>
      Object.entries(v.Labels ?? {})
        .map(([k, x]) => `${k}=${x}`)
        .sort() // Go's map order is random; sorted is one of its orders, and stable
        .join(","),
    Label: (name: string) => v.Labels?.[name] ?? "",
    Links: () => (v.UsageData ? String(v.UsageData.RefCount) : "N/A"),
    Size: () => (v.UsageData ? humanSize(v.UsageData.Size) : "N/A"),
    // cluster volumes only: engined has none
    Group: () => "N/A",
    Availability: () => "N/A",
    Status: () => "N/A",
  });
}

export const byVolumeName = (a: VolumeSummary, b: VolumeSummary): number => (naturalLess(a.Name, b.Name) ? -1 : naturalLess(b.Name, a.Name) ? 1 : 0);
