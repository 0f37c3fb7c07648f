// The registry of bench/pull.mjs: Debian's docker-registry with a config of the run's own
// (filesystem storage in the run's folder, 127.0.0.1 and a port, log to a file), started on the
// host or in a network namespace, and the push of the bench image to it over plain HTTP. Also the
// time limit on an HTTP exchange that the bench's requests to the daemons use too.
import { spawn } from "node:child_process";
import { closeSync, createReadStream, openSync, readFileSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { createServer } from "node:net";
import { sha } from "./pull-image.mjs";
import { sleep } from "./processes.mjs";

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The registry's config, written to `file`: its storage in `storageDir`, on 127.0.0.1:`port`. */
export function registryConfig(file, storageDir, port, readonly) {
  writeFileSync(file, [
    "version: 0.1",
    "log:",
    "  level: warn",
    "  formatter: text",
    "  accesslog:",
    "    disabled: true",
    "storage:",
    "  filesystem:",
    `    rootdirectory: ${storageDir}`,
    "  maintenance:",
    "    uploadpurging:",
    "      enabled: false",
    "    readonly:",
    `      enabled: ${readonly}`,
    "http:",
    `  addr: 127.0.0.1:${port}`,
    "",
  ].join("\n"));
  return file;
}

/** docker-registry serve, optionally through nsenter into a network namespace (nsenter execs it: same pid). */
export function startRegistry(config, log, netns) {
  const [cmd, args] = netns ? ["nsenter", [`--net=${netns}`, "docker-registry", "serve", config]] : ["docker-registry", ["serve", config]];
  const fd = openSync(log, "a");
  const proc = spawn(cmd, args, { stdio: ["ignore", fd, fd] });
  closeSync(fd);
  return proc;
}

/** Whether `pid`'s network namespace has a TCP socket listening on 127.0.0.1:port (/proc/PID/net/tcp is that namespace's). */
function listening(pid, port) {
  try {
    const want = `0100007F:${port.toString(16).toUpperCase().padStart(4, "0")}`;
    return readFileSync(`/proc/${pid}/net/tcp`, "utf8").split("\n").some((line) => {
      const f = line.trim().split(/\s+/);
      return f[1] === want && f[3] === "0A";
    });
  } catch {
    return false;
  }
}

/** Until the registry listens, looking in the network namespace of `nsPid` (not the registry's own
 * pid: until nsenter has entered the namespace, that is the host's, where the first registry listens). */
export async function waitListening(proc, nsPid, port, log, limitMs = 15_000) {
  const until = Date.now() + limitMs;
  while (!listening(nsPid, port)) {
    if (proc.exitCode !== null || Date.now() > until) throw new Error(`docker-registry did not start: ${tail(log)}`);
    await sleep(20);
  }
}

function tail(file) {
  try {
    return readFileSync(file, "utf8").trim().split("\n").slice(-3).join(" | ").slice(0, 300) || "(no output)";
  } catch {
    return "(no log)";
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP to the registry on 127.0.0.1: the push

/** A time limit on the whole exchange (request and response), not only on silence. */
export function limit(req, ms, text) {
  const timer = setTimeout(() => req.destroy(new Error(text)), ms);
  req.once("close", () => clearTimeout(timer));
}

export const registryAgent = new Agent({ keepAlive: true, maxSockets: 1 });

function http(opts, body, limitMs = 60_000) {
  return new Promise((resolve, reject) => {
    const req = request({ agent: registryAgent, ...opts }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    limit(req, limitMs, `${opts.method} ${opts.path}: not done in ${limitMs / 1000} s`);
    if (body === undefined || Buffer.isBuffer(body)) req.end(body);
    else body.pipe(req);
  });
}

async function pushBlob(base, repo, data, digest, size) {
  const start = await http({ ...base, method: "POST", path: `/v2/${repo}/blobs/uploads/`, headers: { "content-length": 0 } });
  if (start.status !== 202 || !start.headers.location) throw new Error(`blob upload start answered ${start.status}: ${start.text.slice(0, 200)}`);
  const url = new URL(start.headers.location, `http://${base.host}:${base.port}`);
  url.searchParams.set("digest", digest);
  const body = Buffer.isBuffer(data) ? data : createReadStream(data);
  const put = await http({ ...base, method: "PUT", path: url.pathname + url.search, headers: { "content-type": "application/octet-stream", "content-length": size } }, body, 120_000);
  if (put.status !== 201) throw new Error(`blob upload of ${digest.slice(0, 19)} answered ${put.status}: ${put.text.slice(0, 200)}`);
}

/** Pushes `image` (from makeImage) as `repo`:`tag` to the registry on 127.0.0.1:`port`. */
export async function pushImage(port, image, repo, tag) {
  const base = { host: "127.0.0.1", port };
  const ping = await http({ ...base, method: "GET", path: "/v2/" });
  if (ping.status !== 200) throw new Error(`registry /v2/ answered ${ping.status}`);
  for (const l of image.layers) await pushBlob(base, repo, l.file, l.digest, l.size);
  await pushBlob(base, repo, image.config, sha(image.config), image.config.length);
  const put = await http({ ...base, method: "PUT", path: `/v2/${repo}/manifests/${tag}`, headers: { "content-type": "application/vnd.docker.distribution.manifest.v2+json", "content-length": image.manifest.length } }, image.manifest);
  if (put.status !== 201) throw new Error(`manifest upload answered ${put.status}: ${put.text.slice(0, 200)}`);
}
