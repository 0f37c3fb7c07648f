/**
 * `--node-generic-resource` / `node-generic-resources`: the resources this node advertises to a
 * cluster, so that an orchestrator can place tasks that ask for them (Docker's rules, from
 * swarmkit's generic resources):
 * - each entry is `<name>=<value>`, with exactly one `=`; spaces around either part are dropped;
 * - a name given once with an integer value is a discrete resource, a count (`gpu=2`): a
 *   negative count is refused;
 * - a name given with string values is a set of named resources, one per entry
 *   (`gpu=UUID1`, `gpu=UUID2`);
 * - a name with an integer among several values, or mixing both kinds, is refused.
 */
import type { GenericResource } from "../system-info.js";
import { ValueError } from "../options/value-types.js";

const INT64_MAX = 2n ** 63n - 1n;

/** Go's strconv.ParseInt(s, 10, 64) succeeds. */
function isInteger(value: string): boolean {
  if (!/^[+-]?\d+$/.test(value)) return false;
  const n = BigInt(value);
  return n <= INT64_MAX && n >= -INT64_MAX - 1n;
}

/** One entry alone (the option's value check). */
export function checkGenericResourceEntry(entry: string): void {
  const parts = entry.split("=");
  if (parts.length !== 2) throw new ValueError(`expected <name>=<value> with exactly one "="`);
  if (parts[0].trim() === "") throw new ValueError("the resource name is empty");
  if (parts[1].trim() === "") throw new ValueError("the resource value is empty (give a count or a resource's name)");
}

/** All entries together, as `/info` shows them; throws a ValueError saying which rule a name breaks. */
export function parseGenericResources(entries: readonly string[]): GenericResource[] {
  const byKind = new Map<string, string[]>();
  for (const entry of entries) {
    checkGenericResourceEntry(entry);
    const [kind, value] = entry.split("=").map((p) => p.trim());
    byKind.set(kind, [...(byKind.get(kind) ?? []), value]);
  }
  const out: GenericResource[] = [];
  for (const [kind, values] of byKind) {
    if (values.length === 1 && isInteger(values[0])) {
      const count = Number(values[0]);
      if (count < 0) throw new ValueError(`node-generic-resource ${kind}: a count cannot be negative (${values[0]})`);
      out.push({ DiscreteResourceSpec: { Kind: kind, Value: count } });
    } else if (values.every((v) => !isInteger(v))) {
      out.push(...values.map((v) => ({ NamedResourceSpec: { Kind: kind, Value: v } })));
    } else {
      throw new ValueError(
        `node-generic-resource ${kind} mixes a count with other values (${values.join(", ")}): give ${kind} once as a count, or once per named resource`,
      );
    }
  }
  return out;
}
