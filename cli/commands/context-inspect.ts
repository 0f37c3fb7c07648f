/**
 * `engine context inspect [NAME...]`: contexts as the Docker CLI prints them (the metadata,
 * the TLS files by endpoint, where it is stored), the current one when none is named; or a
 * template on each, run on the CLI's own type (`.Name`, `.Endpoints.docker.Host`,
 * `.Metadata.Metadata.Description`, `.TLSMaterial`, `.Storage.MetadataPath`).
 */
import { ExitError, type Command } from "../command.js";
import { Contexts } from "../context/contexts.js";
import { inspectJson, inspectStruct } from "../format/context-context.js";
import { inspectObjects } from "../format/inspect.js";
import { INSPECT_FORMAT_FLAG } from "../format/inspect-one-kind.js";

export const command: Command = {
  usage: "[OPTIONS] [CONTEXT] [CONTEXT...]",
  flags: [INSPECT_FORMAT_FLAG],
  async run(ctx, { flags, args }) {
    const contexts = new Contexts(ctx);
    const refs = args.length ? args : [contexts.current()];
    if (refs[0] === "") throw new ExitError(1, "no context specified");
    const get = async (name: string) => {
      const c = { meta: contexts.get(name), tlsMaterial: contexts.tlsFiles(name), storage: contexts.storage(name) };
      return { raw: inspectJson(c), value: inspectStruct(c) };
    };
    return inspectObjects(refs, flags.format as string, get, ctx.stdout);
  },
};
