/**
 * `engine context create NAME`: a context from `--docker` options, a copy of another context
 * (`--from`, its TLS files too), or, with neither, a copy of the one in use. Prints the name,
 * and "Successfully created context" on stderr, as the Docker CLI does.
 */
import { ExitError, type Command } from "../command.js";
import { checkNewName, Contexts, DEFAULT_DESCRIPTION } from "../context/contexts.js";
import { DEFAULT_CONTEXT } from "../context/current.js";
import { ENDPOINT_KEYS_HELP, endpointFromOptions } from "../context/endpoint-options.js";
import { DOCKER_ENDPOINT } from "../context/metadata.js";
import { stringToString, type FlagSpec } from "../flags.js";

export const DOCKER_FLAG: FlagSpec = { name: "docker", type: "list", valueName: "stringToString", description: "set the docker endpoint (default [])" };
export const DESCRIPTION_FLAG: FlagSpec = { name: "description", type: "string", description: "Description of the context" };

/** The help text of `create` and `update`. */
export const endpointHelp = (verb: string): string =>
  `${verb[0].toUpperCase()}${verb.slice(1)} a context\n\n${ENDPOINT_KEYS_HELP}\nExample:\n\n$ engine context ${verb} my-context --description "some description" --docker "host=tcp://myserver:2376,ca=~/ca-file,cert=~/cert-file,key=~/key-file"`;

export const command: Command = {
  usage: "[OPTIONS] CONTEXT",
  long: endpointHelp("create"),
  flags: [DESCRIPTION_FLAG, DOCKER_FLAG, { name: "from", type: "string", description: "create context from a named context" }],
  args: { min: 1, max: 1 },
  async run(ctx, { flags, args, given }) {
    const name = args[0];
    const docker = stringToString(flags.docker as string[], "--docker");
    const description = flags.description as string;
    const contexts = new Contexts(ctx);
    try {
      checkNewName(contexts.store, name);
      const from = (flags.from as string) || (given.has("docker") ? "" : contexts.current());
      if (from) {
        if (Object.keys(docker).length) throw new Error("cannot use --docker flag when --from is set");
        // a copy: the endpoint and its TLS files under the new name, the description replaced if one is given
        const source = contexts.get(from);
        const tls = contexts.readAllTls(from);
        const copied = description || (from === DEFAULT_CONTEXT ? DEFAULT_DESCRIPTION : source.description);
        contexts.store.write({ ...source, name, description: copied });
        contexts.store.resetTls(name, tls);
      } else {
        let endpoint;
        try {
          endpoint = endpointFromOptions(contexts, docker);
        } catch (e) {
          throw new Error(`unable to create docker endpoint config: ${(e as Error).message}`);
        }
        contexts.store.write({ name, description, extra: {}, endpoints: { [DOCKER_ENDPOINT]: endpoint.meta } });
        contexts.store.resetTls(name, endpoint.tls ? { [DOCKER_ENDPOINT]: endpoint.tls } : {});
      }
    } catch (e) {
      throw new ExitError(1, (e as Error).message);
    }
    ctx.stdout(`${name}\n`);
    ctx.stderr(`Successfully created context "${name}"\n`);
    return 0;
  },
};
