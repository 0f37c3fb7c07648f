/**
 * Pulls by registry clients against engined and a real registry (Debian's docker-registry 2.8.2,
 * no auth): an OCI image with zstd layers pulled and run, and `docker pull` (its output, and the
 * JSON lines over the API) and `docker rmi` of a pulled tag compared with Docker's own daemon
 * where `dockerd` is installed (test/helpers/dockerd.ts: its own namespace and roots).
 */
import "./helpers/root-hooks.js";
import { request as httpReq } from "node:http";
import { expect } from "chai";
import { runCommand } from "./helpers/engined.js";
import { have, startDockerd } from "./helpers/dockerd.js";
import { httpRequest } from "./helpers/http.js";
import { clientSuite, linesOf } from "./helpers/registry-clients.js";
import { busyboxRootfs, makeTar } from "./fixtures/images.js";
import { pushImage } from "./fixtures/registry-push.js";

/**
 * A `docker pull` output split into the lines about layers (`<12 hex>: <status>`, in order per
 * layer) and the rest, in order: the shape to compare between daemons (layers interleave by timing).
 */
function pullShape(text: string): { other: string[]; layers: Map<string, string[]> } {
  const other: string[] = [];
  const layers = new Map<string, string[]>();
  for (const line of linesOf(text)) {
    const m = /^([0-9a-f]{12}): (.*)$/.exec(line);
    if (!m) {
      other.push(line);
      continue;
    }
    if (!layers.has(m[1])) layers.set(m[1], []);
    layers.get(m[1])!.push(m[2]);
  }
  return { other, layers };
}

/** Docker's order of a layer's pull statuses; each may repeat (Downloading, Extracting). */
const DOCKER_ORDER = ["Pulling fs layer", "Waiting", "Downloading", "Verifying Checksum", "Download complete", "Extracting", "Pull complete"];

/** Whether a layer's statuses start with "Pulling fs layer", end with "Pull complete" and never go back in Docker's order. */
function inDockerOrder(seq: readonly string[]): boolean {
  const at = seq.map((s) => DOCKER_ORDER.indexOf(s));
  return seq[0] === "Pulling fs layer" && seq.at(-1) === "Pull complete" && at.every((i, k) => i >= 0 && (k === 0 || i >= at[k - 1]));
}

/** A raw POST /images/create?fromImage= over the socket: the status and the JSON lines. */
function rawPull(socketPath: string, name: string, tag: string, auth?: object): Promise<{ status: number; lines: Record<string, unknown>[]; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { "content-length": "0" };
    if (auth) headers["x-registry-auth"] = Buffer.from(JSON.stringify(auth)).toString("base64url");
    const req = httpReq({ socketPath, method: "POST", path: `/v1.41/images/create?fromImage=${encodeURIComponent(name)}&tag=${tag}`, headers, timeout: 60_000 }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => {
        try {
          resolve({ status: res.statusCode ?? 0, text, lines: res.statusCode === 200 ? linesOf(text).map((l) => JSON.parse(l)) : [] });
        } catch (e) {
          reject(e);
        }
      });
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error("pull timed out")));
    req.on("error", reject);
    req.end();
  });
}

/** Per layer id, the statuses in order, a run of the same status (Downloading, Extracting) counted once. */
function statusesByLayer(lines: Record<string, unknown>[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const l of lines) {
    const id = l.id as string | undefined;
    if (!id || !/^[0-9a-f]{12}$/.test(id)) continue;
    const list = out.get(id) ?? [];
    if (list.at(-1) !== l.status) list.push(l.status as string);
    out.set(id, list);
  }
  return out;
}

describe("registry clients: docker CLI, dockerode, python3-docker", function () {
  this.timeout(60_000);
  const suite = clientSuite();
  const { newConfig, ok, registry } = suite;

  describe("more of the protocol", function () {
    it("zstd: an OCI image with zstd layers pulls, and a container sees its files", async function () {
      const { d } = suite;
      const reg = await registry({ auth: "none" });
      const layers = [await busyboxRootfs(), await makeTar([{ name: "etc/hello", data: "hello from zstd\n" }])];
      const img = await pushImage(reg, "team/zstd", "1", layers, { format: "oci", compression: "zstd" });
      expect(img.layerBlobs[0].subarray(0, 4).toString("hex")).to.equal("28b52ffd"); // zstd's magic
      const config = newConfig();
      const ref = `${reg.host}/team/zstd:1`;
      const pull = await ok(config, ["pull", ref]);
      expect(linesOf(pull.stdout).filter((l) => /: Pull complete$/.test(l))).to.have.length(2);
      expect(pull.stdout).to.include(`Digest: ${img.manifestDigest}`);
      const inspect = JSON.parse((await httpRequest({ socketPath: d.socket }, "GET", `/v1.41/images/${encodeURIComponent(ref)}/json`)).body);
      expect(inspect.RootFS.Layers).to.deep.equal(img.diffIds);
      expect(inspect.Id).to.equal(img.configDigest);
      const run = await ok(config, ["run", "--rm", "--network", "none", ref, "/bin/busybox", "cat", "/etc/hello"]);
      expect(run.stdout).to.equal("hello from zstd\n");
    });

    it("docker pull prints what it prints against Docker's daemon; the JSON lines in Docker's order", async function () {
      const { d, client } = suite;
      this.timeout(110_000);
      const reg = await registry({ auth: "none" });
      const layers = [await busyboxRootfs(), await makeTar([{ name: "etc/", type: "directory" }, { name: "etc/cmp", data: "cmp\n" }])];
      const img = await pushImage(reg, "team/cmp", "1", layers);
      const ref = `${reg.host}/team/cmp:1`;
      const ids = img.layerDigests.map((x) => x.slice(7, 19));

      // 1. The JSON lines engined sends over the API, in Docker's order.
      const raw = await rawPull(d.socket, `${reg.host}/team/cmp`, "1");
      expect(raw.status, raw.text).to.equal(200);
      const lines = raw.lines;
      expect(lines[0]).to.deep.equal({ status: "Pulling from team/cmp", id: "1" });
      expect(lines.slice(-2)).to.deep.equal([{ status: `Digest: ${img.manifestDigest}` }, { status: `Status: Downloaded newer image for ${ref}` }]);
      const byLayer = statusesByLayer(lines);
      expect([...byLayer.keys()].sort()).to.deep.equal([...ids].sort());
      for (const id of ids) {
        expect(byLayer.get(id)!.filter((s) => s !== "Waiting"), id).to.deep.equal(["Pulling fs layer", "Downloading", "Verifying Checksum", "Download complete", "Extracting", "Pull complete"]);
      }
      // Every layer is announced before any download, and the base layer completes first.
      const firstDownload = lines.findIndex((l) => l.status === "Downloading");
      expect(lines.slice(0, firstDownload).filter((l) => l.status === "Pulling fs layer").map((l) => l.id)).to.deep.equal(ids);
      expect(lines.filter((l) => l.status === "Pull complete").map((l) => l.id)).to.deep.equal(ids);
      // The shapes of the messages, as Docker's daemon writes them.
      expect(lines.find((l) => l.status === "Pulling fs layer")).to.deep.equal({ status: "Pulling fs layer", progressDetail: {}, id: ids[0] });
      const downloading = lines.find((l) => l.status === "Downloading" && l.id === ids[0])!;
      expect(downloading.progressDetail).to.have.keys("current", "total");
      expect(downloading.progress).to.match(/^\[=*>\s*\]\s+\d+(\.\d+)?[kMG]?B\/\d+(\.\d+)?[kMG]?B$/);
      // Gone again (with its layers) for the CLI's pull.
      await client.getImage((await client.getImage(ref).inspect()).Id).remove({ force: true });

      // 2. `docker pull` (the CLI, not on a terminal): a line per status, Pull complete per layer.
      const config = newConfig();
      const mine = await ok(config, ["pull", ref]);
      expect(linesOf(mine.stdout).filter((l) => /^[0-9a-f]{12}: Pull complete$/.test(l)).map((l) => l.slice(0, 12)).sort()).to.deep.equal([...ids].sort());

      // 3. The same pull through Docker's own daemon, where it is installed: the same lines
      // (per layer in the same order; layers interleave by timing), the same digest and status.
      if (!have("dockerd") || !have("unshare") || !have("nsenter")) {
        this.skip(); // dockerd is not installed: no same-run comparison (parts 1 and 2 passed)
      }
      const dockerd = await startDockerd(reg);
      try {
        const theirs = await runCommand("docker", ["-H", `unix://${dockerd.socket}`, "pull", ref], {
          env: { DOCKER_HOST: undefined, DOCKER_CONTEXT: undefined, DOCKER_CONFIG: newConfig() },
          timeoutMs: 60_000,
        });
        expect(theirs.code, `dockerd: ${theirs.stderr}`).to.equal(0);
        // Docker's daemon passes a layer's progress to the client through a broadcaster that
        // keeps only the latest message for a reader that is behind, so of the statuses between
        // "Pulling fs layer" and "Pull complete" (Waiting, Downloading, Verifying Checksum,
        // Download complete, Extracting) any may be missing from a given run of dockerd (seen:
        // "Verifying Checksum" missing one run, there the next). So: the lines that are not
        // about a layer are the same, the same layers are named, each layer's statuses run in
        // Docker's order from "Pulling fs layer" to "Pull complete" in both, the layers complete
        // in the same order, and engined's statuses per layer are all of Docker's, none missing.
        const mineShape = pullShape(mine.stdout);
        const theirShape = pullShape(theirs.stdout);
        expect(mineShape.other).to.deep.equal(theirShape.other);
        expect([...mineShape.layers.keys()].sort()).to.deep.equal([...theirShape.layers.keys()].sort());
        const completed = (text: string) => linesOf(text).filter((l) => l.endsWith(": Pull complete")).map((l) => l.slice(0, 12));
        expect(completed(mine.stdout)).to.deep.equal(completed(theirs.stdout));
        for (const id of ids) {
          for (const [who, seq] of [["engined", mineShape.layers.get(id)!], ["dockerd", theirShape.layers.get(id)!]] as const) {
            expect(inDockerOrder(seq), `${who} ${id}: ${seq.join(", ")}`).to.equal(true);
          }
          expect(mineShape.layers.get(id)!.filter((s) => s !== "Waiting"), id).to.deep.equal(["Pulling fs layer", "Verifying Checksum", "Download complete", "Pull complete"]);
        }
        // And the JSON lines over the API: the same lines not about a layer, each layer's
        // statuses in Docker's order from "Pulling fs layer" to "Pull complete" in both.
        const rm = await httpRequest({ socketPath: dockerd.socket }, "DELETE", `/v1.41/images/${encodeURIComponent(ref)}?force=1`);
        expect(rm.status, rm.body).to.equal(200);
        const rawTheirs = await rawPull(dockerd.socket, `${reg.host}/team/cmp`, "1");
        expect(rawTheirs.status, rawTheirs.text).to.equal(200);
        expect(lines.filter((l) => !l.id || l.id === "1")).to.deep.equal(rawTheirs.lines.filter((l) => !l.id || l.id === "1"));
        const theirsByLayer = statusesByLayer(rawTheirs.lines);
        expect([...theirsByLayer.keys()].sort()).to.deep.equal([...ids].sort());
        for (const id of ids) expect(inDockerOrder(theirsByLayer.get(id)!), `dockerd ${id}: ${theirsByLayer.get(id)!.join(", ")}`).to.equal(true);
        // The message shapes are the same for the statuses both sent.
        const shapeOf = (l: Record<string, unknown>) => Object.keys(l).sort().join(",") + (l.progressDetail ? `|${Object.keys(l.progressDetail as object).sort().join(",")}` : "");
        for (const st of ["Pulling fs layer", "Verifying Checksum", "Download complete", "Downloading", "Extracting", "Pull complete"]) {
          const theirsLine = rawTheirs.lines.find((l) => l.status === st);
          const mineLine = lines.find((l) => l.status === st);
          if (theirsLine && mineLine) expect(shapeOf(mineLine), st).to.equal(shapeOf(theirsLine));
        }
      } finally {
        await dockerd.stop();
      }
    });

    it("docker rmi of a pulled tag removes the image and its digest name, as against Docker's daemon; another tag keeps it", async function () {
      const { d } = suite;
      this.timeout(110_000);
      const reg = await registry({ auth: "none" });
      const img = await pushImage(reg, "team/rmi", "1", [await busyboxRootfs()]);
      const ref = `${reg.host}/team/rmi:1`;
      const byDigest = `${reg.host}/team/rmi@${img.manifestDigest}`;
      const config = newConfig();
      const removal = async (socket: string) => {
        const env = { DOCKER_HOST: undefined, DOCKER_CONTEXT: undefined, DOCKER_CONFIG: config };
        const run = async (args: string[]) => {
          const r = await runCommand("docker", ["-H", `unix://${socket}`, ...args], { env, timeoutMs: 60_000 });
          expect(r.code, `docker ${args.join(" ")}: ${r.stderr}`).to.equal(0);
          return r.stdout;
        };
        await run(["pull", ref]);
        // a second tag of the same repository: only that tag goes
        await run(["tag", ref, `${reg.host}/team/rmi:2`]);
        const untag = await run(["rmi", `${reg.host}/team/rmi:2`]);
        // the last tag: the digest name goes with it, then the image and its layer
        const rmi = await run(["rmi", ref]);
        const left = await run(["images", "-a", "--digests", "--format", "{{.Repository}}@{{.Digest}} {{.ID}}"]);
        return { untag, rmi, left };
      };
      const mine = await removal(d.socket);
      expect(mine.untag).to.equal(`Untagged: ${reg.host}/team/rmi:2\n`);
      expect(linesOf(mine.rmi).slice(0, 3)).to.deep.equal([`Untagged: ${ref}`, `Untagged: ${byDigest}`, `Deleted: ${img.configDigest}`]);
      expect(linesOf(mine.rmi).slice(3)).to.deep.equal([`Deleted: ${img.diffIds[0]}`]); // a base layer's chain ID is its diff ID
      expect(mine.left).to.not.include("team/rmi");

      if (!have("dockerd") || !have("unshare") || !have("nsenter")) {
        this.skip(); // dockerd is not installed: no same-run comparison (engined's side passed)
      }
      const dockerd = await startDockerd(reg);
      try {
        const theirs = await removal(dockerd.socket);
        expect(mine.untag).to.equal(theirs.untag);
        expect(mine.rmi).to.equal(theirs.rmi);
        expect(theirs.left).to.not.include("team/rmi");
      } finally {
        await dockerd.stop();
      }
    });
  });
});
