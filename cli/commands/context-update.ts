/**
 * `engine context update NAME`: a new description (an empty one changes nothing), a new docker
 * endpoint from `--docker` (its TLS files replaced by those given, or removed), as the Docker CLI
 * updates one. "default" cannot be updated.
 */
import { ExitError, type Command } from "../command.js";
import { Contexts, invalidName } from "../context/contexts.js";
import { endpointFromOptions } from "../context/endpoint-options.js";
import { DOCKER_ENDPOINT } from "../context/metadata.js";
import { stringToString } from "../flags.js";
import { DESCRIPTION_FLAG, DOCKER_FLAG, endpointHelp } from "./context-create.js";

export const command: Command = {
  usage: "[OPTIONS] CONTEXT",
  long: endpointHelp("update"),
  flags: [DESCRIPTION_FLAG, DOCKER_FLAG],
  args: { min: 1, max: 1 },
  async run(ctx, { flags, args, given }) {
    const name = args[0];
    const docker = stringToString(flags.docker as string[], "--docker");
    const contexts = new Contexts(ctx);
    try {
      const invalid = invalidName(name);
      if (invalid) throw new Error(invalid);
      const meta = contexts.store.get(name);
      if (flags.description) meta.description = flags.description as string;
      let tls: Record<string, Buffer> | undefined;
      if (given.has("docker")) {
        try {
          const endpoint = endpointFromOptions(contexts, docker);
          meta.endpoints[DOCKER_ENDPOINT] = endpoint.meta;
          tls = endpoint.tls;
        } catch (e) {
          throw new Error(`unable to create docker endpoint config: ${(e as Error).message}`);
        }
      }
      contexts.store.write(meta);
      if (given.has("docker")) contexts.store.resetEndpointTls(name, DOCKER_ENDPOINT, tls);
    } catch (e) {
      throw new ExitError(1, (e as Error).message);
    }
    ctx.stdout(`${name}\n`);
    ctx.stderr(`Successfully updated context "${name}"\n`);
    return 0;
  },
};
