/**
 * Reads `daemon.json`. Its keys are the options' keys from the table (the flag's name, or the
 * plural for repeatable flags; `proxies` is an object of three keys); each value is read by
 * its option's value type. Every problem is collected, so that one message can name the file
 * and every offending directive: keys that match no option, keys of the other platform, and
 * values of the wrong type or form.
 */
import { errors } from "../errors.js";
import { platformsOfKey } from "./option.js";
import { definitionOf, optionNames, type OptionName, type Platform } from "./table.js";
import { describeJson, ValueError } from "./value-types.js";

interface FileProblems {
  unknown: string[];
  otherPlatform: string[];
  invalid: string[];
}

/** Where each top-level key (and each member of an object key) of the file leads. */
function keyIndex(): { direct: Map<string, OptionName>; nested: Map<string, Map<string, OptionName>> } {
  const direct = new Map<string, OptionName>();
  const nested = new Map<string, Map<string, OptionName>>();
  for (const name of optionNames) {
    const def = definitionOf(name);
    for (const key of [def.key, ...(def.legacyKeys ?? [])]) {
      if (!key) continue;
      const dot = key.indexOf(".");
      if (dot < 0) direct.set(key, name);
      else {
        const parent = key.slice(0, dot);
        if (!nested.has(parent)) nested.set(parent, new Map());
        nested.get(parent)!.set(key.slice(dot + 1), name);
      }
    }
  }
  return { direct, nested };
}

const index = keyIndex();

/**
 * Parses the file's text; throws one error naming the file and every problem. A file with
 * nothing in it but white space sets nothing, as Docker 28 takes it.
 */
export function parseConfigFile(text: string, path: string, platform: Platform): Map<OptionName, unknown> {
  if (text.trim() === "") return new Map();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw errors.configInvalid(path, [`it is not valid JSON: ${(err as Error).message}`]);
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) {
    throw errors.configInvalid(path, [`it must hold a JSON object, not ${describeJson(json)}`]);
  }
  const values = new Map<OptionName, unknown>();
  const problems: FileProblems = { unknown: [], otherPlatform: [], invalid: [] };
  const seenBy = new Map<OptionName, string>();
  const take = (key: string, name: OptionName, value: unknown) => {
    const def = definitionOf(name);
    if (!platformsOfKey(def, key).includes(platform)) {
      problems.otherPlatform.push(key);
      return;
    }
    if (seenBy.has(name)) {
      problems.invalid.push(`${key}: ${seenBy.get(name)} sets the same option; give only one of them`);
      return;
    }
    seenBy.set(name, key);
    try {
      values.set(name, def.type.fromFile(value));
    } catch (err) {
      if (!(err instanceof ValueError)) throw err;
      problems.invalid.push(`${key}: ${err.message}`);
    }
  };
  for (const [key, value] of Object.entries(json)) {
    const name = index.direct.get(key);
    const members = index.nested.get(key);
    if (name) take(key, name, value);
    else if (members) {
      if (value === null || typeof value !== "object" || Array.isArray(value)) {
        problems.invalid.push(`${key}: expected an object, got ${describeJson(value)}`);
        continue;
      }
      for (const [member, memberValue] of Object.entries(value)) {
        const memberName = members.get(member);
        if (memberName) take(`${key}.${member}`, memberName, memberValue);
        else problems.unknown.push(`${key}.${member}`);
      }
    } else problems.unknown.push(key);
  }
  const lines: string[] = [];
  if (problems.unknown.length) lines.push(`the following directives don't match any configuration option: ${problems.unknown.join(", ")}`);
  if (problems.otherPlatform.length) {
    lines.push(`the following directives are not supported on the ${platform} platform: ${problems.otherPlatform.join(", ")}`);
  }
  if (problems.invalid.length) lines.push(`the following directives have invalid values: ${problems.invalid.join("; ")}`);
  if (lines.length) throw errors.configInvalid(path, lines);
  return values;
}
