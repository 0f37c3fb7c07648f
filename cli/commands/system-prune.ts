/**
 * `engine system prune`: removes stopped containers, unused networks, dangling (with -a: unused)
 * images and build cache, after asking as `docker system prune` asks, and prints what went.
 */
import { type Command } from "../command.js";
import { DaemonError } from "../connection.js";
import { filtersJson } from "../format/filters.js";
import { naturalLess } from "../format/network-context.js";
import { humanSize } from "../../core/go-units.js";
import { readAnswer } from "../prune/confirm.js";

/** The question, worded as the Docker CLI's. */
function confirmation(all: boolean, volumes: boolean, filters: Record<string, Record<string, boolean>>): string {
  const warnings = ["all stopped containers", "all networks not used by at least one container"];
  if (volumes) warnings.push("all anonymous volumes not used by at least one container");
  warnings.push(all ? "all images without at least one container associated to them" : "all dangling images");
  warnings.push(all ? "all build cache" : "unused build cache");
  const shown: string[] = [];
  for (const name of ["label", "label!", "until"]) for (const v of Object.keys(filters[name] ?? {})) shown.push(`${name}=${v}`);
  shown.sort((a, b) => (naturalLess(a, b) ? -1 : naturalLess(b, a) ? 1 : 0));
  let text = `WARNING! This will remove:\n${warnings.map((w) => `  - ${w}`).join("\n")}\n`;
  if (shown.length) text += `\n  Items to be pruned will be filtered with:\n${shown.map((f) => `  - ${f}`).join("\n")}\n`;
  return `${text}\nAre you sure you want to continue? [y/N] `;
}

interface PruneReport {
  ContainersDeleted?: string[] | null;
  NetworksDeleted?: string[] | null;
  VolumesDeleted?: string[] | null;
  ImagesDeleted?: { Untagged?: string; Deleted?: string }[] | null;
  CachesDeleted?: string[] | null;
  SpaceReclaimed?: number;
}

export const command: Command = {
  usage: "[OPTIONS]",
  flags: [
    { name: "all", short: "a", type: "bool", description: "Remove all unused images not just dangling ones" },
    { name: "filter", type: "list", valueName: "filter", description: `Provide filter values (e.g. "label=<key>=<value>")` },
    { name: "force", short: "f", type: "bool", description: "Do not prompt for confirmation" },
    { name: "volumes", type: "bool", description: "Prune anonymous volumes" },
  ],
  args: { max: 0 },
  async run(ctx, { flags }) {
    const all = flags.all as boolean;
    const volumes = flags.volumes as boolean;
    const filterText = filtersJson(flags.filter as string[], "--filter");
    const filters = (filterText ? JSON.parse(filterText) : {}) as Record<string, Record<string, boolean>>;
    if (volumes && filters.until) {
      ctx.stderr(`ERROR: The "until" filter is not supported with "--volumes"\n`);
      return 1;
    }
    if (!flags.force) {
      ctx.stdout(confirmation(all, volumes, filters));
      const answer = await readAnswer();
      // anything but y/Y leaves everything as it was (and is no failure, as with the Docker CLI)
      if (answer !== "y" && answer !== "Y") return 0;
    }
    const conn = ctx.connection();
    let reclaimed = 0;
    const prune = async (path: string, query: Record<string, string | undefined>): Promise<PruneReport | undefined> => {
      try {
        return (await conn.json<PruneReport>("POST", path, { query })) ?? {};
      } catch (e) {
        // this daemon has no volumes and no builder yet: their prunes have nothing to remove
        if (e instanceof DaemonError && e.status === 404 && (path === "/volumes/prune" || path === "/build/prune")) return undefined;
        throw e;
      }
    };
    const section = (title: string, items: string[]) => {
      if (items.length) ctx.stdout(`${title}\n${items.map((i) => `${i}\n`).join("")}\n`);
    };

    const containers = await prune("/containers/prune", { filters: filterText });
    if (containers?.ContainersDeleted?.length) reclaimed += containers.SpaceReclaimed ?? 0;
    section("Deleted Containers:", containers?.ContainersDeleted ?? []);

    const networks = await prune("/networks/prune", { filters: filterText });
    section("Deleted Networks:", networks?.NetworksDeleted ?? []);

    if (volumes) {
      const vols = await prune("/volumes/prune", { filters: filterText });
      if (!vols) ctx.stderr("WARNING: the engine has no volumes yet; --volumes had nothing to prune\n");
      if (vols?.VolumesDeleted?.length) reclaimed += vols.SpaceReclaimed ?? 0;
      section("Deleted Volumes:", vols?.VolumesDeleted ?? []);
    }

    const imageFilters: Record<string, Record<string, boolean>> = { ...filters, dangling: { [String(!all)]: true } };
    const images = await prune("/images/prune", { filters: JSON.stringify(Object.fromEntries(Object.keys(imageFilters).sort().map((k) => [k, imageFilters[k]]))) });
    if (images?.ImagesDeleted?.length) reclaimed += images.SpaceReclaimed ?? 0;
    section("Deleted Images:", (images?.ImagesDeleted ?? []).map((i) => (i.Untagged ? `untagged: ${i.Untagged}` : `deleted: ${i.Deleted ?? ""}`)));

    const cache = await prune("/build/prune", { all: all ? "1" : undefined, filters: filterText });
    if (cache?.CachesDeleted?.length) {
      reclaimed += cache.SpaceReclaimed ?? 0;
      section("Deleted build cache objects:", cache.CachesDeleted);
    }

    ctx.stdout(`Total reclaimed space: ${humanSize(reclaimed)}\n`);
    return 0;
  },
};
