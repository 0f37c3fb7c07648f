/**
 * Names for containers created without one: `<adjective>_<noun>`, readable and unlikely to
 * repeat, with a number added when a name is taken. The word lists are this project's own.
 */
import { randomInt } from "node:crypto";
import { errors } from "../errors.js";

const ADJECTIVES = [
  "amber", "brave", "calm", "deft", "eager", "fleet", "gentle", "hardy", "idle", "jolly", "keen", "lucid", "mellow", "nimble",
  "open", "plucky", "quiet", "rapid", "steady", "tidy", "upbeat", "vivid", "witty", "young", "zesty", "bold", "crisp", "dapper",
];
const NOUNS = [
  "anchor", "badger", "beacon", "canyon", "comet", "delta", "falcon", "fjord", "glacier", "harbor", "heron", "island", "juniper",
  "kestrel", "lagoon", "lantern", "maple", "meadow", "nebula", "orchid", "otter", "pebble", "quartz", "raven", "summit", "tundra",
  "willow", "zephyr",
];

export function generateName(taken: (name: string) => boolean): string {
  for (let attempt = 0; attempt < 100; attempt++) {
    const name = `${ADJECTIVES[randomInt(ADJECTIVES.length)]}_${NOUNS[randomInt(NOUNS.length)]}`;
    const candidate = attempt < 10 ? name : `${name}${randomInt(1000)}`;
    if (!taken(candidate)) return candidate;
  }
  throw errors.containerNoFreeName();
}
