/**
 * Orders plugins so that each comes after every plugin it requires, keeping the given order
 * otherwise (the operator's order matters: authorization plugins are asked in it). A cycle
 * is an error that names it.
 */
import { errors } from "../../core/errors.js";

export interface Orderable {
  id: string;
  requires: readonly string[];
}

export function orderPlugins<T extends Orderable>(items: readonly T[]): T[] {
  const byId = new Map(items.map((item) => [item.id, item]));
  const done = new Set<string>();
  const visiting: string[] = [];
  const out: T[] = [];
  const visit = (item: T) => {
    if (done.has(item.id)) return;
    const at = visiting.indexOf(item.id);
    if (at >= 0) throw errors.pluginCycle([...visiting.slice(at), item.id]);
    visiting.push(item.id);
    for (const required of item.requires) {
      const dep = byId.get(required);
      if (!dep) throw errors.pluginMissingRequirement(item.id, required);
      visit(dep);
    }
    visiting.pop();
    done.add(item.id);
    out.push(item);
  };
  for (const item of items) visit(item);
  return out;
}
