/**
 * The "(did you mean X?)" Docker 28 adds to an unknown instruction (BuildKit's suggestion: the
 * known name nearest by edit distance, when fewer than 3 edits away, compared without case and
 * written in the case of the word as given: all lower, all upper, else lower).
 */

/** Edits (insert, delete, substitute; each 1) from `a` to `b`. */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/** The name of `names` to suggest for `word`, or undefined (none near enough, or `word` is one). */
export function suggestName(word: string, names: Iterable<string>): string | undefined {
  const lower = word.toLowerCase();
  let match: string | undefined;
  let best = 3;
  // (Docker walks a Go map, so of two names as near it picks either; here the first in order)
  for (const name of names) {
    const candidate = name.toLowerCase();
    if (candidate === lower) return undefined;
    const d = editDistance(lower, candidate);
    if (d < best) {
      best = d;
      match = candidate;
    }
  }
  if (match === undefined) return undefined;
  return word === word.toUpperCase() && word !== lower ? match.toUpperCase() : match;
}
