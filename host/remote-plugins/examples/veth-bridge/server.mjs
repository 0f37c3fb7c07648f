#!/usr/bin/env node
/**
 * A network plugin as a server of its own: each network a Linux bridge, each container's
 * interface one end of a veth pair whose other end is a port of that bridge. Plain Node.js
 * and iproute2's `ip`, no dependencies, written to be copied; it runs as root. It speaks the
 * network plugin protocol (libnetwork's "remote" driver, which plugins written for Docker's
 * daemon speak), JSON over HTTP on a unix socket.
 *
 *   node server.mjs [--socket PATH] [--record FILE]
 *
 * The default socket is /run/engine/plugins/vbridge.sock, where engined finds a network driver
 * named `vbridge` (`docker network create -d vbridge --subnet 10.77.0.0/24 net1`).
 * `--record FILE` appends each call the plugin is made (method and body) as a JSON line.
 * See README.md.
 */
import { createServer } from "node:http";
import { execFileSync } from "node:child_process";
import { appendFileSync, mkdirSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { parseArgs } from "node:util";

const { values: args } = parseArgs({ options: { socket: { type: "string" }, record: { type: "string" } } });

// --- the links: names made from the ids, so that a restarted plugin finds its own again -------

const bridgeOf = (networkId) => `vb${networkId.slice(0, 10)}`;
const hostEndOf = (endpointId) => `vh${endpointId.slice(0, 10)}`;
const containerEndOf = (endpointId) => `vc${endpointId.slice(0, 10)}`;

function ip(...argv) {
  return execFileSync("ip", argv, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

function exists(link) {
  try {
    ip("link", "show", "dev", link);
    return true;
  } catch {
    return false;
  }
}

/** The network's gateway (the bridge's own address, without its prefix length), read back from the bridge. */
function gatewayOf(networkId) {
  const addrs = JSON.parse(ip("-j", "addr", "show", "dev", bridgeOf(networkId)))[0]?.addr_info ?? [];
  return addrs.find((a) => a.family === "inet")?.local ?? "";
}

function check(id, what) {
  if (typeof id !== "string" || !/^[0-9a-f]{12,64}$/.test(id)) throw new Error(`invalid ${what} ${JSON.stringify(id)}`);
}

const handlers = {
  "/Plugin.Activate": () => ({ Implements: ["NetworkDriver"] }),
  "/NetworkDriver.GetCapabilities": () => ({ Scope: "local", ConnectivityScope: "local" }),
  "/NetworkDriver.CreateNetwork": ({ NetworkID, IPv4Data }) => {
    check(NetworkID, "network id");
    const bridge = bridgeOf(NetworkID);
    if (!exists(bridge)) ip("link", "add", "name", bridge, "type", "bridge");
    // the bridge holds each subnet's gateway address, so that the host reaches the containers
    for (const data of IPv4Data ?? []) if (data.Gateway) ip("addr", "replace", data.Gateway, "dev", bridge);
    ip("link", "set", bridge, "up");
    return {};
  },
  "/NetworkDriver.DeleteNetwork": ({ NetworkID }) => {
    check(NetworkID, "network id");
    if (exists(bridgeOf(NetworkID))) ip("link", "del", "dev", bridgeOf(NetworkID));
    return {};
  },
  "/NetworkDriver.CreateEndpoint": ({ NetworkID, EndpointID }) => {
    check(NetworkID, "network id");
    check(EndpointID, "endpoint id");
    const hostEnd = hostEndOf(EndpointID);
    if (!exists(hostEnd)) ip("link", "add", hostEnd, "type", "veth", "peer", "name", containerEndOf(EndpointID));
    ip("link", "set", hostEnd, "master", bridgeOf(NetworkID));
    ip("link", "set", hostEnd, "up");
    // the daemon's addresses and MAC are kept: nothing to say back
    return { Interface: null };
  },
  "/NetworkDriver.Join": ({ NetworkID, EndpointID }) => {
    check(NetworkID, "network id");
    check(EndpointID, "endpoint id");
    return { InterfaceName: { SrcName: containerEndOf(EndpointID), DstPrefix: "eth" }, Gateway: gatewayOf(NetworkID) };
  },
  "/NetworkDriver.EndpointOperInfo": () => ({ Value: {} }),
  "/NetworkDriver.Leave": () => ({}),
  "/NetworkDriver.DeleteEndpoint": ({ EndpointID }) => {
    check(EndpointID, "endpoint id");
    // deleting one end deletes the pair (the other end may already have gone with its container)
    if (exists(hostEndOf(EndpointID))) ip("link", "del", "dev", hostEndOf(EndpointID));
    return {};
  },
  // (no ProgramExternalConnectivity: this plugin publishes no ports; the daemon takes its 404 as "nothing to do")
};

// --- the protocol ----------------------------------------------------------------------------

const MEDIA_TYPE = "application/vnd.docker.plugins.v1.2+json";

const server = createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    const handler = handlers[request.url];
    let status = 200;
    let answer;
    let body = {};
    if (request.method !== "POST" || !handler) {
      status = 404;
      answer = { Err: `unknown method ${request.method} ${request.url}` };
    } else {
      try {
        const text = Buffer.concat(chunks).toString("utf8");
        body = text ? JSON.parse(text) : {};
        answer = handler(body ?? {});
      } catch (err) {
        // the daemon shows a plugin's Err as "remote: <Err>"
        answer = { Err: `veth-bridge: ${(err.stderr || err.message).trim()}` };
      }
    }
    if (args.record) appendFileSync(args.record, JSON.stringify({ method: request.url.slice(1), body }) + "\n");
    response.writeHead(status, { "content-type": MEDIA_TYPE });
    response.end(JSON.stringify(answer));
  });
});

const socketPath = args.socket ?? "/run/engine/plugins/vbridge.sock";
mkdirSync(dirname(socketPath), { recursive: true });
rmSync(socketPath, { force: true });
server.listen(socketPath, () => process.stdout.write(`veth-bridge listening on ${socketPath}\n`));

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    server.close();
    server.closeAllConnections();
    rmSync(socketPath, { force: true });
    process.exit(0);
  });
}
