/**
 * Images of the list (`GET /images/json`) as `docker images` shows them: a row per repository
 * and tag (and digest, with --digests), `<none>` rows for dangling images, and the fields a
 * template sees (.Repository, .Tag, .Digest, .ID, .CreatedSince, .CreatedAt, .Size, ...).
 */
import { goTimeString, since } from "./human.js";
import { truncateId } from "./render.js";
import { splitRepoRef } from "./reference.js";
import { struct, type GoStruct } from "./template.js";
import { humanSize } from "../../core/go-units.js";

export interface ImageSummary {
  Id: string;
  RepoTags?: string[] | null;
  RepoDigests?: string[] | null;
  Created?: number;
  Size?: number;
  SharedSize?: number;
  Containers?: number;
}

export const IMAGE_HEADERS: Record<string, string> = {
  ID: "IMAGE ID",
  Repository: "REPOSITORY",
  Tag: "TAG",
  Digest: "DIGEST",
  CreatedSince: "CREATED",
  CreatedAt: "CREATED AT",
  Size: "SIZE",
  Containers: "CONTAINERS",
  VirtualSize: "SIZE",
  SharedSize: "SHARED SIZE",
  UniqueSize: "UNIQUE SIZE",
};

export const IMAGE_TYPE = "*formatter.imageContext";

export function imageContext(img: ImageSummary, trunc: boolean, repo: string, tag: string, digest: string): GoStruct {
  const size = img.Size ?? 0;
  const shared = img.SharedSize ?? -1;
  return struct(IMAGE_TYPE, {
    ID: () => (trunc ? truncateId(img.Id) : img.Id),
    Repository: () => repo,
    Tag: () => tag,
    Digest: () => digest,
    CreatedSince: () => since(img.Created ?? 0),
    CreatedAt: () => goTimeString(img.Created ?? 0),
    Size: () => humanSize(size, 3),
    Containers: () => ((img.Containers ?? -1) === -1 ? "N/A" : String(img.Containers)),
    VirtualSize: () => humanSize(size),
    SharedSize: () => (shared === -1 ? "N/A" : humanSize(shared)),
    UniqueSize: () => (size === -1 || shared === -1 ? "N/A" : humanSize(size - shared)),
  });
}

function isDangling(img: ImageSummary): boolean {
  const tags = img.RepoTags ?? [];
  const digests = img.RepoDigests ?? [];
  if (tags.length === 0 && digests.length === 0) return true;
  return tags.length === 1 && tags[0] === "<none>:<none>" && digests.length === 1 && digests[0] === "<none>@<none>";
}

/** The rows of the list: `showDigests` is --digests, `needDigest` also when a template uses .Digest. */
export function imageRows(images: readonly ImageSummary[], trunc: boolean, showDigests: boolean, needDigest: boolean): GoStruct[] {
  const rows: GoStruct[] = [];
  for (const img of images) {
    if (isDangling(img)) {
      rows.push(imageContext(img, trunc, "<none>", "<none>", "<none>"));
      continue;
    }
    const repoTags = new Map<string, string[]>();
    const repoDigests = new Map<string, string[]>();
    for (const ref of img.RepoTags ?? []) {
      const r = splitRepoRef(ref);
      if (r?.tag) repoTags.set(r.repo, [...(repoTags.get(r.repo) ?? []), r.tag]);
    }
    for (const ref of img.RepoDigests ?? []) {
      const r = splitRepoRef(ref);
      if (r?.digest) repoDigests.set(r.repo, [...(repoDigests.get(r.repo) ?? []), r.digest]);
    }
    for (const [repo, tags] of repoTags) {
      const digests = needDigest ? (repoDigests.get(repo) ?? []) : [];
      repoDigests.delete(repo);
      for (const tag of tags) {
        if (digests.length === 0) rows.push(imageContext(img, trunc, repo, tag, "<none>"));
        else for (const d of digests) rows.push(imageContext(img, trunc, repo, tag, d));
      }
    }
    for (const [repo, digests] of repoDigests) {
      if (showDigests) for (const d of digests) rows.push(imageContext(img, trunc, repo, "<none>", d));
      else rows.push(imageContext(img, trunc, repo, "<none>", ""));
    }
  }
  return rows;
}
