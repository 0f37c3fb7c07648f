/** `engine logout`: remove a registry's saved credentials from config.json. */
import type { Command } from "../command.js";
import { convertToHostname, eraseCredentials } from "../auth/config.js";
import { INDEX_SERVER } from "../auth/registry-auth.js";

export const command: Command = {
  usage: "[SERVER]",
  flags: [],
  args: { max: 1 },
  async run(ctx, { args }) {
    const server = args[0] || INDEX_SERVER;
    const hub = !args[0];
    const shown = hub ? server : convertToHostname(server);
    // the older forms a registry may have been saved under, as the Docker CLI tries them
    const keys = hub ? [server] : [server, shown, `http://${shown}`, `https://${shown}`];
    // Like the Docker CLI (since 27) the message is the same whether credentials were saved or not.
    ctx.stdout(`Removing login credentials for ${shown}\n`);
    eraseCredentials(ctx.configDir, keys);
    return 0;
  },
};
