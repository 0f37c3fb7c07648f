/**
 * The `changes` of `docker import` / `docker commit`: Dockerfile instructions applied to an
 * image's configuration as Docker's daemon applies them (its BuildFromConfig): the builder's own
 * parser and dispatch of the instructions that change only the configuration (CMD, ENTRYPOINT,
 * ENV, EXPOSE, HEALTHCHECK, LABEL, ONBUILD, STOPSIGNAL, USER, VOLUME, WORKDIR), with variables
 * substituted from the configuration's environment as it stands at each change
 * (`ENV PATH=$PATH:/opt/bin`), and an ENTRYPOINT without a CMD among the changes clearing the
 * inherited CMD.
 */
import { configInstruction, workdirOf } from "../../core/build/config-instruction.js";
import { parseChanges } from "../../core/build/dockerfile-parse.js";
import { expand, expandWords, lookupIn } from "../../core/build/shell-lex.js";
import type { ContainerConfig } from "../../core/images/image-config.js";

export function applyChanges(base: ContainerConfig, changes: readonly string[]): ContainerConfig {
  let config: ContainerConfig = structuredClone(base);
  if (changes.length === 0) return config;
  const { escape, instructions } = parseChanges(changes);
  let cmdSet = false;
  for (const i of instructions) {
    const lookup = lookupIn(config.Env ?? []);
    const words = { word: (s: string) => expand(s, lookup, escape), words: (list: readonly string[]) => list.flatMap((s) => expandWords(s, lookup, escape)) };
    if (i.keyword === "workdir") {
      config = { ...config, WorkingDir: workdirOf(config.WorkingDir, words.word(i.args.join(" "))) };
      continue;
    }
    // parseChanges let through only keywords configInstruction takes
    config = configInstruction(config, i, words, cmdSet)!.config;
    if (i.keyword === "cmd") cmdSet = true;
  }
  return config;
}
