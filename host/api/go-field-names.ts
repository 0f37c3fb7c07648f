/**
 * Go's encoding/json, which Docker's daemon reads request bodies with, matches an object's key to
 * a struct field without regard to case when no field has that exact name. Clients lean on it:
 * docker-py sends an exec's `detachKeys` where the API says `DetachKeys`, and Docker's daemon
 * takes it. `withGoFieldNames` renames a body's top-level keys to the route's field names the
 * same way (an exact name wins; of several spellings of one field, the last in the body wins, as
 * Go decodes keys in order); keys that name no field are left as they are.
 */
export function withGoFieldNames(body: unknown, fields: readonly string[]): unknown {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return body;
  const byFolded = new Map(fields.map((f) => [f.toLowerCase(), f]));
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    const field = fields.includes(key) ? key : byFolded.get(key.toLowerCase()) ?? key;
    out[field] = value;
  }
  return out;
}
