#!/usr/bin/env node
/**
 * A volume plugin as a server of its own: each volume is a folder under a root folder of the
 * plugin's. Plain Node.js with no dependencies, written to be copied: it speaks the volume
 * plugin protocol (the one plugins written for Docker's daemon speak), JSON over HTTP on a
 * unix socket.
 *
 *   node server.mjs --root DIR [--socket PATH] [--scope local|global] [--record FILE]
 *
 * The default socket is /run/engine/plugins/dirs.sock, where engined finds a volume driver
 * named `dirs` (`docker volume create -d dirs`, `docker run --volume-driver dirs`).
 * `--record FILE` appends each call the plugin is made (method and body) as a JSON line.
 * See README.md.
 */
import { createServer } from "node:http";
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";

const { values: args } = parseArgs({
  options: {
    root: { type: "string" },
    socket: { type: "string" },
    scope: { type: "string" },
    record: { type: "string" },
  },
});
if (!args.root) {
  process.stderr.write("usage: server.mjs --root DIR [--socket PATH] [--scope local|global] [--record FILE]\n");
  process.exit(2);
}
const root = args.root;
mkdirSync(root, { recursive: true, mode: 0o700 });

// --- the volumes: <root>/<name>/data holds the data, <root>/<name>/options.json the options ---

/** Container ids (the daemon's mount IDs) using each volume, kept in memory: a restart of the plugin forgets them. */
const users = new Map();

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
function folder(name) {
  if (typeof name !== "string" || !NAME.test(name)) throw new Error(`invalid volume name ${JSON.stringify(name)}`);
  return join(root, name);
}

function volume(name) {
  const dir = folder(name);
  if (!existsSync(join(dir, "data"))) return undefined;
  const mounts = users.get(name)?.size ?? 0;
  return {
    Name: name,
    // shown only while mounted, as plugins that mount on demand do
    Mountpoint: mounts > 0 ? join(dir, "data") : "",
    CreatedAt: statSync(join(dir, "data")).birthtime.toISOString(),
    Status: { mounts, options: JSON.parse(readFileSync(join(dir, "options.json"), "utf8")) },
  };
}

const OPTIONS = new Set(["size", "owner"]);

const handlers = {
  "/Plugin.Activate": () => ({ Implements: ["VolumeDriver"] }),
  "/VolumeDriver.Capabilities": () => ({ Capabilities: { Scope: args.scope ?? "local" } }),
  "/VolumeDriver.Create": ({ Name, Opts }) => {
    for (const key of Object.keys(Opts ?? {})) if (!OPTIONS.has(key)) return { Err: `unknown option ${key}` };
    const dir = folder(Name);
    if (volume(Name)) return { Err: `volume ${Name} exists` };
    mkdirSync(join(dir, "data"), { recursive: true });
    writeFileSync(join(dir, "options.json"), JSON.stringify(Opts ?? {}));
    return { Err: "" };
  },
  "/VolumeDriver.Get": ({ Name }) => {
    const v = volume(Name);
    return v ? { Volume: v, Err: "" } : { Err: `no such volume ${Name}` };
  },
  "/VolumeDriver.List": () => ({ Volumes: readdirSync(root).map(volume).filter(Boolean), Err: "" }),
  "/VolumeDriver.Path": ({ Name }) => {
    const v = volume(Name);
    return v ? { Mountpoint: v.Mountpoint, Err: "" } : { Err: `no such volume ${Name}` };
  },
  "/VolumeDriver.Mount": ({ Name, ID }) => {
    if (!volume(Name)) return { Err: `no such volume ${Name}` };
    if (!users.has(Name)) users.set(Name, new Set());
    users.get(Name).add(ID);
    return { Mountpoint: join(folder(Name), "data"), Err: "" };
  },
  "/VolumeDriver.Unmount": ({ Name, ID }) => {
    users.get(Name)?.delete(ID);
    if (users.get(Name)?.size === 0) users.delete(Name);
    return { Err: "" };
  },
  "/VolumeDriver.Remove": ({ Name }) => {
    if (!volume(Name)) return { Err: `no such volume ${Name}` };
    if (users.has(Name)) return { Err: `volume ${Name} is mounted` };
    rmSync(folder(Name), { recursive: true, force: true });
    return { Err: "" };
  },
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
        status = 500;
        answer = { Err: `dir-volumes: ${err.message}` };
      }
    }
    if (args.record) appendFileSync(args.record, JSON.stringify({ method: request.url.slice(1), body }) + "\n");
    response.writeHead(status, { "content-type": MEDIA_TYPE });
    response.end(JSON.stringify(answer));
  });
});

const socketPath = args.socket ?? "/run/engine/plugins/dirs.sock";
mkdirSync(dirname(socketPath), { recursive: true });
rmSync(socketPath, { force: true });
server.listen(socketPath, () => process.stdout.write(`dir-volumes listening on ${socketPath}\n`));

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    server.close();
    server.closeAllConnections();
    rmSync(socketPath, { force: true });
    process.exit(0);
  });
}
