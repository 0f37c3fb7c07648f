/** `engine system df`: disk usage of images, containers, volumes and build cache, as `docker system df`. */
import { ExitError, type Command } from "../command.js";
import { CONTAINER_HEADERS, CONTAINER_TYPE, containerContext, type ContainerSummary } from "../format/container-context.js";
import { since } from "../format/human.js";
import { IMAGE_HEADERS, IMAGE_TYPE, imageContext, type ImageSummary } from "../format/image-context.js";
import { renderList, truncateId } from "../format/render.js";
import { splitRepoRef } from "../format/reference.js";
import { alignColumns } from "../format/table.js";
import { parseTemplate, struct, TemplateError, type GoStruct } from "../format/template.js";
import { humanSize } from "../../core/go-units.js";
import { VOLUME_TYPE, volumeContext, type VolumeSummary } from "../format/volume-context.js";

interface CacheRecord {
  ID: string;
  Type?: string;
  Size?: number;
  CreatedAt?: string;
  LastUsedAt?: string | null;
  UsageCount?: number;
  InUse?: boolean;
  Shared?: boolean;
}

interface DiskUsage {
  LayersSize?: number;
  Images?: ImageSummary[] | null;
  Containers?: ContainerSummary[] | null;
  Volumes?: VolumeSummary[] | null;
  BuildCache?: CacheRecord[] | null;
  BuilderSize?: number;
}

const SUMMARY_HEADERS = { Type: "TYPE", TotalCount: "TOTAL", Active: "ACTIVE", Size: "SIZE", Reclaimable: "RECLAIMABLE" };
const TABLE = "table {{.Type}}\t{{.TotalCount}}\t{{.Active}}\t{{.Size}}\t{{.Reclaimable}}";
const RAW = "type: {{.Type}}\ntotal: {{.TotalCount}}\nactive: {{.Active}}\nsize: {{.Size}}\nreclaimable: {{.Reclaimable}}\n";

const withPercent = (reclaimable: number, total: number) => (total > 0 ? `${humanSize(reclaimable)} (${Math.trunc((reclaimable * 100) / total)}%)` : humanSize(reclaimable));
const isActive = (c: ContainerSummary) => /running|paused|restarting/.test(c.State ?? "");

/** The four summary rows (Images, Containers, Local Volumes, Build Cache). */
function summaryRows(du: DiskUsage): GoStruct[] {
  const images = du.Images ?? [];
  const containers = du.Containers ?? [];
  const volumes = du.Volumes ?? [];
  const cache = du.BuildCache ?? [];
  const row = (type: string, total: number, active: number, size: number, reclaimable: string) =>
    struct("*formatter.diskUsageContext", { Type: () => type, TotalCount: () => String(total), Active: () => String(active), Size: () => humanSize(size), Reclaimable: () => reclaimable });
  const layers = du.LayersSize ?? 0;
  let usedByContainers = 0;
  for (const i of images) if ((i.Containers ?? 0) > 0 && i.Size !== -1 && i.SharedSize !== -1) usedByContainers += (i.Size ?? 0) - (i.SharedSize ?? 0);
  const rw = containers.reduce((n, c) => n + (c.SizeRw ?? 0), 0);
  const rwIdle = containers.filter((c) => !isActive(c)).reduce((n, c) => n + (c.SizeRw ?? 0), 0);
  const volSize = volumes.reduce((n, v) => n + (v.UsageData && v.UsageData.Size !== -1 ? v.UsageData.Size : 0), 0);
  const volIdle = volumes.reduce((n, v) => n + (v.UsageData && v.UsageData.Size !== -1 && v.UsageData.RefCount === 0 ? v.UsageData.Size : 0), 0);
  const cacheSize = cache.reduce((n, c) => n + (c.Shared ? 0 : (c.Size ?? 0)), 0);
  const cacheIdle = cache.reduce((n, c) => n + (c.Shared || c.InUse ? 0 : (c.Size ?? 0)), 0);
  return [
    row("Images", images.length, images.filter((i) => (i.Containers ?? 0) > 0).length, layers, withPercent(layers - usedByContainers, layers)),
    row("Containers", containers.length, containers.filter(isActive).length, rw, withPercent(rwIdle, rw)),
    row("Local Volumes", volumes.length, volumes.filter((v) => (v.UsageData?.RefCount ?? 0) > 0).length, volSize, withPercent(volIdle, volSize)),
    row("Build Cache", cache.length, cache.filter((c) => c.InUse).length, cacheSize, humanSize(cacheIdle)),
  ];
}

function cacheContext(c: CacheRecord, trunc: boolean): GoStruct {
  return struct("*formatter.buildCacheContext", {
    ID: () => (trunc ? truncateId(c.ID) : c.ID),
    CacheType: () => c.Type ?? "",
    Size: () => humanSize(c.Size ?? 0),
    CreatedSince: () => since(Date.parse(c.CreatedAt ?? "") / 1000),
    LastUsedSince: () => (c.LastUsedAt ? since(Date.parse(c.LastUsedAt) / 1000) : ""),
    UsageCount: () => String(c.UsageCount ?? 0),
    Shared: () => String(c.Shared ?? false),
  });
}

/** The verbose rows: an image shows its first tag only; a container its own size only. */
function verboseData(du: DiskUsage, trunc: boolean) {
  const images = (du.Images ?? []).map((i) => {
    let repo = "<none>";
    let tag = "<none>";
    const first = (i.RepoTags ?? [])[0];
    if (first && first !== "<none>:<none>") {
      const r = splitRepoRef(first);
      if (r?.tag) {
        repo = r.repo;
        tag = r.tag;
      }
    }
    return imageContext(i, trunc, repo, tag, "");
  });
  const containers = (du.Containers ?? []).map((c) => containerContext({ ...c, SizeRootFs: 0 }, trunc));
  const volumes = (du.Volumes ?? []).map(volumeContext);
  const cache = [...(du.BuildCache ?? [])].sort((a, b) => Date.parse(b.LastUsedAt ?? b.CreatedAt ?? "") - Date.parse(a.LastUsedAt ?? a.CreatedAt ?? "")).map((c) => cacheContext(c, trunc));
  return { images, containers, volumes, cache };
}

function verboseTable(du: DiskUsage): string {
  const { images, containers, volumes, cache } = verboseData(du, true);
  const table = (format: string, headers: Record<string, string>, type: string, rows: GoStruct[]) => renderList({ format, headers, typeName: type }, rows);
  return (
    "Images space usage:\n\n" +
    table("table {{.Repository}}\t{{.Tag}}\t{{.ID}}\t{{.CreatedSince}}\t{{.Size}}\t{{.SharedSize}}\t{{.UniqueSize}}\t{{.Containers}}", IMAGE_HEADERS, IMAGE_TYPE, images) +
    "\nContainers space usage:\n\n" +
    table("table {{.ID}}\t{{.Image}}\t{{.Command}}\t{{.LocalVolumes}}\t{{.Size}}\t{{.RunningFor}}\t{{.Status}}\t{{.Names}}", CONTAINER_HEADERS, CONTAINER_TYPE, containers) +
    "\nLocal Volumes space usage:\n\n" +
    table("table {{.Name}}\t{{.Links}}\t{{.Size}}", { Name: "VOLUME NAME", Links: "LINKS", Size: "SIZE" }, VOLUME_TYPE, volumes) +
    `\nBuild cache usage: ${humanSize(du.BuilderSize ?? (du.BuildCache ?? []).reduce((n, c) => n + (c.Size ?? 0), 0))}\n\n` +
    table(
      "table {{.ID}}\t{{.CacheType}}\t{{.Size}}\t{{.CreatedSince}}\t{{.LastUsedSince}}\t{{.UsageCount}}\t{{.Shared}}",
      { ID: "CACHE ID", CacheType: "CACHE TYPE", Size: "SIZE", CreatedSince: "CREATED", LastUsedSince: "LAST USED", UsageCount: "USAGE", Shared: "SHARED" },
      "*formatter.buildCacheContext",
      cache,
    )
  );
}

export const command: Command = {
  usage: "[OPTIONS]",
  flags: [
    { name: "format", type: "string", description: "Format output using a custom template: 'table', 'table TEMPLATE', 'json' or a Go template" },
    { name: "verbose", short: "v", type: "bool", description: "Show detailed information on space usage" },
  ],
  args: { max: 0 },
  async run(ctx, { flags }) {
    const verbose = flags.verbose as boolean;
    const format = (flags.format as string) || "table";
    const du = await ctx.connection().getJson<DiskUsage>("/system/df");
    try {
      if (!verbose) {
        const final = format === "table" ? TABLE : format === "raw" ? RAW : format;
        ctx.stdout(renderList({ format: final, headers: SUMMARY_HEADERS, typeName: "*formatter.diskUsageContainersContext" }, summaryRows(du)));
        return 0;
      }
      if (format === "table") {
        ctx.stdout(verboseTable(du));
        return 0;
      }
      // a verbose template sees the four lists at once (.Images, .Containers, .Volumes, .BuildCache)
      const data = verboseData(du, format.startsWith("table"));
      const root = struct("*formatter.diskUsageContext", {
        Images: data.images,
        Containers: data.containers,
        Volumes: data.volumes,
        BuildCache: data.cache,
        toJSON: () => ({ Images: data.images, Containers: data.containers, Volumes: data.volumes, BuildCache: data.cache }),
      });
      let body = format === "json" ? "{{json .}}" : format.startsWith("table") ? format.slice(5) : format;
      body = body.replace(/^ +| +$/g, "").replace(/\\t/g, "\t").replace(/\\n/g, "\n");
      const text = parseTemplate(body).execute(root);
      ctx.stdout(format.startsWith("table") ? alignColumns(text) : text);
      return 0;
    } catch (e) {
      if (e instanceof TemplateError) throw new ExitError(1, e.message.startsWith("template parsing error") ? e.message : `template parsing error: ${e.message}`);
      throw e;
    }
  },
};
