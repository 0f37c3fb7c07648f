/**
 * An image's history (`GET /images/{name}/history`) as `docker history` shows it: the fields a
 * template sees (.ID, .CreatedSince, .CreatedAt, .CreatedBy, .Size, .Comment), human units and
 * relative times unless -H=false, and the CLI's truncation of ids and commands.
 */
import { ellipsis, truncateId } from "./render.js";
import { struct, type GoStruct } from "./template.js";
import { humanDuration, humanSize } from "../../core/go-units.js";

export interface HistoryItem {
  Id: string;
  Created: number;
  CreatedBy: string;
  Tags?: string[] | null;
  Size: number;
  Comment: string;
}

export const HISTORY_HEADERS: Record<string, string> = {
  ID: "IMAGE",
  CreatedSince: "CREATED",
  CreatedAt: "CREATED AT",
  CreatedBy: "CREATED BY",
  Size: "SIZE",
  Comment: "COMMENT",
};

export const HISTORY_TYPE = "*image.historyContext";

/** Dates before 2000 are not shown as relative times (Docker's epoch for this column). */
const EPOCH = Date.UTC(2000, 0, 1) / 1000;

/** Go's time.RFC3339 in the local zone ("2026-11-26T22:49:51Z", "...+01:00"). */
function rfc3339(unixSeconds: number): string {
  const d = new Date(unixSeconds * 1000);
  const pad = (n: number) => String(n).padStart(2, "0");
  const offset = -d.getTimezoneOffset();
  const zone = offset === 0 ? "Z" : `${offset < 0 ? "-" : "+"}${pad(Math.trunc(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}${zone}`;
}

export function historyContext(h: HistoryItem, trunc: boolean, human: boolean): GoStruct {
  const createdAt = () => rfc3339(h.Created);
  return struct(HISTORY_TYPE, {
    ID: () => (trunc ? truncateId(h.Id) : h.Id),
    CreatedAt: createdAt,
    CreatedSince: () => (!human ? createdAt() : h.Created <= EPOCH ? "" : `${humanDuration(Date.now() - h.Created * 1000)} ago`),
    CreatedBy: () => {
      const by = h.CreatedBy.replace(/\t/g, " ");
      return trunc ? ellipsis(by, 45) : by;
    },
    Size: () => (human ? humanSize(h.Size, 3) : String(h.Size)),
    Comment: () => h.Comment,
  });
}
