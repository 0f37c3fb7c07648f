// The heavy operations bench/event-loop.mjs watches engined's event loop through (issue 32): a
// pull of 200 MB from a registry on loopback, a load of a 200 MB `docker save` archive, the
// commit of a container that wrote 200 MB, and the reading of a 100 MB log. Each scenario is a
// `prepare` (what must exist first, outside the measured window) and a `run` (the measured
// operation); both take the daemon of bench/daemons.mjs and the run's work folder.
import { execFileSync } from "node:child_process";
import { createReadStream, createWriteStream } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import tarStream from "tar-stream";
import { expect } from "./daemons.mjs";
import { makeImage, sha } from "./pull-image.mjs";
import { freePort, pushImage, registryConfig, startRegistry, waitListening } from "./pull-registry.mjs";
import { endPid } from "./processes.mjs";

const MB = 1024 * 1024;

/** A streamed request whose answer is read to its end (and counted); throws unless 200. */
function stream(sock, method, path, { body, contentType } = {}, limitMs = 300_000) {
  return new Promise((resolve, reject) => {
    const headers = body ? { "content-type": contentType } : { "content-length": 0 };
    const req = request({ socketPath: sock, method, path: `/v1.41${path}`, headers }, (res) => {
      let bytes = 0;
      let tail = "";
      res.on("data", (c) => {
        bytes += c.length;
        tail = (tail + c.toString("latin1")).slice(-400);
      });
      res.on("end", () => (res.statusCode === 200 && !tail.includes('"error"') ? resolve(bytes) : reject(new Error(`${method} ${path} answered ${res.statusCode}: ${tail.slice(-200)}`))));
      res.on("error", reject);
    });
    req.setTimeout(limitMs, () => req.destroy(new Error(`${method} ${path}: not done in ${limitMs} ms`)));
    req.on("error", reject);
    if (body) body.pipe(req);
    else req.end();
  });
}

/** A `docker save` archive of `image` (from makeImage) as `name:latest`, streamed from its layer files. */
async function writeSaveArchive(file, image, name) {
  const pack = tarStream.pack();
  const out = pipeline(pack, createWriteStream(file));
  const add = (header, data) => new Promise((res, rej) => pack.entry(header, data, (err) => (err ? rej(err) : res())));
  const configName = `${sha(image.config).slice(7)}.json`;
  await add({ name: configName }, image.config);
  const layerNames = [];
  for (const [i, l] of image.layers.entries()) {
    const name = `layer${i}/layer.tar`;
    layerNames.push(name);
    const entry = pack.entry({ name, size: l.size });
    await pipeline(createReadStream(l.file), entry);
  }
  await add({ name: "manifest.json" }, Buffer.from(JSON.stringify([{ Config: configName, RepoTags: [`${name}:latest`], Layers: layerNames }])));
  pack.finalize();
  await out;
}

/** The container `sh -c script` created, started and waited for; its id. */
async function runToEnd(sock, script) {
  const { Id } = await expect(201, sock, "POST", "/containers/create", { body: { Image: "busybox", Cmd: ["sh", "-c", script], HostConfig: { NetworkMode: "none" } } });
  await expect(204, sock, "POST", `/containers/${Id}/start`);
  const { StatusCode } = await expect(200, sock, "POST", `/containers/${Id}/wait`, { timeoutMs: 300_000 });
  if (StatusCode !== 0) throw new Error(`${script} exited ${StatusCode}`);
  return Id;
}

/** The scenarios, by name; each `prepare` returns what its `run` needs and a `cleanup`. */
export const scenarios = {
  pull: {
    what: "pull of 200 MB (4 layers) from docker-registry on loopback",
    async prepare(daemon, work) {
      const image = await makeImage(work, 200, 4);
      const port = await freePort();
      const storage = join(work, "registry");
      // pushed to a registry on the host's loopback, then served read-only in the daemon's namespace
      const log = join(work, "registry.log");
      const pusher = startRegistry(registryConfig(join(work, "push.yml"), storage, port, false), log);
      try {
        await waitListening(pusher, pusher.pid, port, log);
        await pushImage(port, image, "bench/pull", "latest");
      } finally {
        await endPid(pusher.pid);
      }
      const netns = `/proc/${daemon.proc.pid}/ns/net`;
      execFileSync("nsenter", [`--net=${netns}`, "ip", "link", "set", "lo", "up"], { stdio: "ignore", timeout: 10_000 });
      const served = startRegistry(registryConfig(join(work, "serve.yml"), storage, port, true), log, netns);
      await waitListening(served, daemon.proc.pid, port, log);
      return { ref: `127.0.0.1:${port}/bench/pull`, cleanup: () => endPid(served.pid) };
    },
    run: (daemon, { ref }) => stream(daemon.sock, "POST", `/images/create?fromImage=${encodeURIComponent(ref)}&tag=latest`),
  },
  load: {
    what: "load of a 200 MB docker save archive (4 layers)",
    async prepare(daemon, work) {
      const image = await makeImage(work, 200, 4);
      const file = join(work, "save.tar");
      await writeSaveArchive(file, image, "bench/load");
      return { file, cleanup: async () => {} };
    },
    run: (daemon, { file }) => stream(daemon.sock, "POST", "/images/load?quiet=1", { body: createReadStream(file), contentType: "application/x-tar" }),
  },
  commit: {
    what: "commit of a container that wrote 200 MB (200 files)",
    async prepare(daemon) {
      const id = await runToEnd(daemon.sock, "mkdir /data && for i in $(seq 200); do head -c 1048576 /dev/urandom > /data/f$i; done");
      return { id, cleanup: () => expect(204, daemon.sock, "DELETE", `/containers/${id}?force=1`) };
    },
    run: (daemon, { id }) => expect(201, daemon.sock, "POST", `/commit?container=${id}&repo=bench/commit`, { timeoutMs: 300_000 }),
  },
  logs: {
    what: "docker logs of 100 MB (json-file)",
    async prepare(daemon) {
      // lines of 100 bytes: 1,048,576 of them
      const id = await runToEnd(daemon.sock, "yes 0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456 | head -n 1048576");
      return { id, cleanup: () => expect(204, daemon.sock, "DELETE", `/containers/${id}?force=1`) };
    },
    async run(daemon, { id }) {
      const bytes = await stream(daemon.sock, "GET", `/containers/${id}/logs?stdout=1&stderr=1`);
      // each line is framed in an 8-byte header
      if (bytes < 100 * MB) throw new Error(`the logs were ${bytes} bytes, not 100 MiB and more`);
      return bytes;
    },
  },
};
