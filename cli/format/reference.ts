/** RepoTags and RepoDigests entries as the listings show them (parsing: ../reference.ts). */

import { familiarString, parseNormalizedNamed } from "../reference.js";

/** "name:tag" and "name@digest" from a RepoTags / RepoDigests entry, split and familiar. */
export function splitRepoRef(ref: string): { repo: string; tag?: string; digest?: string } | undefined {
  try {
    const r = parseNormalizedNamed(ref);
    return { repo: familiarString({ domain: r.domain, path: r.path }), tag: r.tag, digest: r.digest };
  } catch {
    return undefined;
  }
}
