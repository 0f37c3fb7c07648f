/**
 * `container prune`, `image prune`, `volume prune` and `network prune`: the same shape in the
 * Docker CLI. A warning and a [y/N] question unless -f (a "no" removes nothing and is no
 * failure), `--filter` into the API's filters with what the flags add, then what went and,
 * except for networks, the space reclaimed.
 */
import type { Command } from "../command.js";
import { filtersJson } from "../format/filters.js";
import { humanSize } from "../../core/go-units.js";
import type { FlagSpec, FlagValue } from "../flags.js";
import { confirm } from "./confirm.js";

export type Filters = Record<string, Record<string, boolean>>;

export interface PruneReport {
  ContainersDeleted?: string[] | null;
  NetworksDeleted?: string[] | null;
  VolumesDeleted?: string[] | null;
  ImagesDeleted?: { Untagged?: string; Deleted?: string }[] | null;
  SpaceReclaimed?: number;
}

export interface PruneKind {
  path: string;
  /** Flags besides --filter and --force. */
  flags?: FlagSpec[];
  filterExample: string;
  warning(flags: Record<string, FlagValue>): string;
  /** Adds what the flags mean to the filters; throws an Error whose message is printed. */
  addFilters?(flags: Record<string, FlagValue>, filters: Filters): void;
  /** The section's title and lines. */
  deleted(report: PruneReport): { title: string; lines: string[] };
  /** `network prune` prints no total. */
  noTotal?: boolean;
}

/** Filters as JSON with the keys sorted, as the Go client encodes them. */
const encodeFilters = (filters: Filters): string | undefined =>
  Object.keys(filters).length ? JSON.stringify(Object.fromEntries(Object.keys(filters).sort().map((k) => [k, filters[k]]))) : undefined;

export function pruneCommand(kind: PruneKind): Command {
  return {
    usage: "[OPTIONS]",
    flags: ([
      ...(kind.flags ?? []),
      { name: "filter", type: "list", valueName: "filter", description: `Provide filter values (e.g. "${kind.filterExample}")` },
      { name: "force", short: "f", type: "bool", description: "Do not prompt for confirmation" },
    ] as FlagSpec[]).sort((a, b) => (a.name < b.name ? -1 : 1)),
    args: { max: 0 },
    async run(ctx, { flags }) {
      const text = filtersJson(flags.filter as string[], "--filter");
      const filters = (text ? JSON.parse(text) : {}) as Filters;
      try {
        kind.addFilters?.(flags, filters);
      } catch (e) {
        ctx.stderr(`${(e as Error).message}\n`);
        return 1;
      }
      if (!flags.force && !(await confirm(ctx.stdout, kind.warning(flags)))) return 0;
      const report = (await ctx.connection().json<PruneReport>("POST", kind.path, { query: { filters: encodeFilters(filters) } })) ?? {};
      const { title, lines } = kind.deleted(report);
      if (lines.length) ctx.stdout(`${title}\n${lines.map((l) => `${l}\n`).join("")}\n`);
      if (!kind.noTotal) ctx.stdout(`Total reclaimed space: ${humanSize(lines.length ? (report.SpaceReclaimed ?? 0) : 0)}\n`);
      return 0;
    },
  };
}
