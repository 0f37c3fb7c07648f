/** Why this file: the journald driver's option check, Docker's rule and message, apart from the socket code. */
const KNOWN = new Set(["labels", "labels-regex", "env", "env-regex", "tag"]);

export function validateJournaldOptions(options: Record<string, string>): void {
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key)) throw new Error(`unknown log opt '${key}' for journald log driver`);
  }
}
