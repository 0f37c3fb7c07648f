/** `engine network connect`: join a container to a network, with the endpoint's addresses, aliases, links and options. */
import type { Command } from "../command.js";
import { ENDPOINT_STATE } from "../container/network-options.js";
import { validLink } from "../container/units.js";
import { readEach, stringSlice } from "../flags.js";

export const command: Command = {
  usage: "[OPTIONS] NETWORK CONTAINER",
  flags: [
    { name: "alias", type: "list", valueName: "strings", description: "Add network-scoped alias for the container" },
    { name: "driver-opt", type: "list", valueName: "strings", description: "driver options for the network" },
    { name: "gw-priority", type: "int", description: "Highest gw-priority provides the default gateway. Accepts positive and negative values." },
    { name: "ip", type: "string", description: `IPv4 address (e.g., "172.30.100.104")` },
    { name: "ip6", type: "string", description: `IPv6 address (e.g., "2001:db8::33")` },
    { name: "link", type: "list", description: "Add link to another container" },
    { name: "link-local-ip", type: "list", valueName: "strings", description: "Add a link-local address for the container" },
  ],
  args: { min: 2, max: 2 },
  async run(ctx, { flags, args }) {
    const [network, container] = args;
    const links = readEach(flags.link as string[], "--link", validLink);
    const driverOpts: Record<string, string> = {};
    for (const opt of stringSlice(flags["driver-opt"] as string[], "--driver-opt")) {
      const eq = opt.indexOf("=");
      const key = eq < 0 ? "" : opt.slice(0, eq).trim();
      if (key === "") {
        ctx.stderr("invalid key/value pair format in driver options\n");
        return 1;
      }
      driverOpts[key] = opt.slice(eq + 1).trim();
    }
    const ipam: Record<string, unknown> = {};
    if (flags.ip) ipam.IPv4Address = String(flags.ip);
    if (flags.ip6) ipam.IPv6Address = String(flags.ip6);
    const linkLocal = stringSlice(flags["link-local-ip"] as string[], "--link-local-ip");
    if (linkLocal.length) ipam.LinkLocalIPs = linkLocal;
    // every field of Docker's EndpointSettings, as the Docker CLI sends it
    const endpoint = {
      IPAMConfig: ipam,
      Links: links.length ? links : null,
      Aliases: stringSlice(flags.alias as string[], "--alias"),
      MacAddress: "",
      DriverOpts: driverOpts,
      GwPriority: flags["gw-priority"] as number,
      ...ENDPOINT_STATE,
    };
    (await ctx.connection().call("POST", `/networks/${encodeURIComponent(network)}/connect`, { json: { Container: container, EndpointConfig: endpoint } })).body.resume();
    return 0;
  },
};
