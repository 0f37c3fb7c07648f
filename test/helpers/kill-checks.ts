/**
 * What must hold after any kill of engined and its start again (the kill-point tests), checked
 * through the API and on disk; each check returns the problems it found, as sentences:
 * - every container listed is what it says: a layer of its own, running ones known to the
 *   supervisor as running with the same pid (paused ones frozen, running ones not), stopped
 *   ones unknown to it, the run folder and network sandbox of running ones only;
 * - no layer without its record, no record without its layer, no pending mark, no image
 *   without its layers, no blob that nothing keeps;
 * - no mount under the roots but those of running containers;
 * - no temporary file (`.tmp-*`, the temporary folder, half-made layouts, layers being removed);
 * - volumes listed are the local driver's, and the other way round;
 * - networks: a bridge (and rules) for each user-defined network and none without one, no
 *   address held for an endpoint that no running container has.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { SupervisorClient } from "../../host/supervisor/client.js";
import { cgroupOfPid } from "../../host/containers/cgroup-files.js";
import { mountsUnder } from "./daemon-leftovers.js";
import type { KillBed } from "./kill-bed.js";
import type { Netns } from "./net-daemon.js";

const HEX64 = /^[a-f0-9]{64}$/;
const list = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Record_ {
  Id: string;
  State: { Running: boolean; Paused: boolean; Status: string; Pid: number };
  Endpoints?: { endpointId: string }[];
  Mounts?: { Type: string; Name?: string }[];
}

/** The container records on disk, by id. */
export function containerRecords(bed: KillBed): Map<string, Record_> {
  const out = new Map<string, Record_>();
  for (const id of list(join(bed.dataRoot, "containers"))) {
    const file = join(bed.dataRoot, "containers", id, "config.json");
    if (existsSync(file)) out.set(id, JSON.parse(readFileSync(file, "utf8")) as Record_);
  }
  return out;
}

async function supervisorStates(bed: KillBed): Promise<{ id: string; status: string; pid: number }[]> {
  const socket = join(bed.execRoot, "supervisor", "supervisor.sock");
  if (!existsSync(socket)) return [];
  const client = new SupervisorClient(socket);
  try {
    return await client.list();
  } catch {
    return [];
  } finally {
    await client.close().catch(() => undefined);
  }
}

function frozen(pid: number): boolean | undefined {
  try {
    const cg = cgroupOfPid(pid);
    const v1 = cg.dir("freezer");
    if (cg.version === 1 && v1) return readFileSync(join(v1, "freezer.state"), "utf8").trim() === "FROZEN";
    const v2 = cg.dir("");
    return v2 ? readFileSync(join(v2, "cgroup.freeze"), "utf8").trim() === "1" : undefined;
  } catch {
    return undefined;
  }
}

/** Containers: listed in a true state. */
async function checkContainers(bed: KillBed): Promise<string[]> {
  const problems: string[] = [];
  const listed = await bed.ok<{ Id: string }[]>("GET", "/containers/json?all=1");
  const records = containerRecords(bed);
  const sup = await supervisorStates(bed);
  const ids = new Set(listed.map((c) => c.Id));
  for (const dir of list(join(bed.dataRoot, "containers"))) {
    if (!ids.has(dir)) problems.push(`containers/${dir} is no container the daemon lists`);
  }
  const running = new Set<string>();
  for (const { Id } of listed) {
    const c = await bed.ok<{ State: Record_["State"] }>("GET", `/containers/${Id}/json`).catch(() => undefined);
    if (!c) continue; // removed meanwhile (an AutoRemove container's exit)
    const s = c.State;
    const short = Id.slice(0, 12);
    if (!existsSync(join(bed.dataRoot, "overlay2", Id, "diff"))) problems.push(`container ${short} (${s.Status}) has no writable layer`);
    if (!records.has(Id)) problems.push(`container ${short} has no record on disk`);
    const held = sup.find((x) => x.id === Id);
    if (s.Running) {
      running.add(Id);
      if (held?.status !== "running") problems.push(`container ${short} is listed ${s.Status}, the supervisor has it ${held?.status ?? "not at all"}`);
      else if (held.pid !== s.Pid) problems.push(`container ${short}: pid ${s.Pid} listed, ${held.pid} running`);
      const isFrozen = held?.status === "running" ? frozen(held.pid) : undefined;
      if (isFrozen !== undefined && isFrozen !== s.Paused) problems.push(`container ${short} is listed ${s.Status} but its processes are ${isFrozen ? "" : "not "}frozen`);
    } else if (held) {
      problems.push(`container ${short} is listed ${s.Status}, the supervisor still has it (${held.status})`);
    }
  }
  for (const s of sup) if (!ids.has(s.id)) problems.push(`the supervisor has ${s.id.slice(0, 12)} (${s.status}), which is no container`);
  for (const id of list(join(bed.execRoot, "containers"))) if (!running.has(id)) problems.push(`exec-root/containers/${id.slice(0, 12)} left for a container that does not run`);
  for (const id of list(join(bed.execRoot, "netns"))) if (!running.has(id)) problems.push(`network sandbox of ${id.slice(0, 12)} left, the container does not run`);
  return problems;
}

/** Layers, images and blobs: each with what it needs, nothing without an owner. */
function checkLayers(bed: KillBed): string[] {
  const problems: string[] = [];
  const image = join(bed.dataRoot, "image");
  const layerDir = join(image, "layers");
  const records = new Map<string, { chainId: string; diffId: string; parent?: string; compressed?: { digest: string }; layout?: true }>();
  for (const f of list(layerDir)) {
    const m = /^([a-f0-9]{64})\.json$/.exec(f);
    if (m) records.set(m[1], JSON.parse(readFileSync(join(layerDir, f), "utf8")));
    else if (!/^[a-f0-9]{64}\.layout$/.test(f)) problems.push(`image/layers/${f} left`);
  }
  const containers = new Set(containerRecords(bed).keys());
  const driverLayers = list(join(bed.dataRoot, "overlay2")).filter((n) => n !== "l");
  for (const n of driverLayers) {
    if (!HEX64.test(n)) problems.push(`overlay2/${n} left`);
    else if (!records.has(n) && !containers.has(n)) problems.push(`layer ${n.slice(0, 12)} has no record (no image layer, no container)`);
    else if (existsSync(join(bed.dataRoot, "overlay2", n, ".incomplete"))) problems.push(`layer ${n.slice(0, 12)} is incomplete`);
  }
  const blobs = new Set(list(join(image, "blobs", "sha256")).map((b) => `sha256:${b}`));
  const kept = new Set<string>();
  for (const [hex, rec] of records) {
    if (!driverLayers.includes(hex)) problems.push(`layer record ${hex.slice(0, 12)} has no layer`);
    if (rec.parent && !records.has(rec.parent.slice(7))) problems.push(`layer ${hex.slice(0, 12)} has no parent record`);
    const blob = rec.compressed?.digest ?? (rec.layout ? undefined : rec.diffId);
    if (blob) kept.add(blob);
    if (blob && !blobs.has(blob)) problems.push(`layer ${hex.slice(0, 12)} lost its blob`);
    if (rec.layout && !existsSync(join(layerDir, `${hex}.layout`))) problems.push(`layer ${hex.slice(0, 12)} lost its layout`);
  }
  for (const f of list(join(image, "images"))) {
    const rec = JSON.parse(readFileSync(join(image, "images", f), "utf8")) as { id: string; chain: string[] };
    kept.add(rec.id);
    if (!blobs.has(rec.id)) problems.push(`image ${rec.id.slice(7, 19)} has no config`);
    for (const c of rec.chain) if (!records.has(c.slice(7))) problems.push(`image ${rec.id.slice(7, 19)} lacks layer ${c.slice(7, 19)}`);
  }
  for (const b of blobs) if (!kept.has(b)) problems.push(`blob ${b.slice(7, 19)} is kept by nothing`);
  return problems;
}

/** Mounts under the roots: only those of running containers (their root, sandbox and volumes). */
function checkMounts(bed: KillBed, records: Map<string, Record_>): string[] {
  const running = [...records.values()].filter((c) => c.State.Running);
  const ids = new Set(running.map((c) => c.Id));
  const volumes = new Set(running.flatMap((c) => (c.Mounts ?? []).filter((m) => m.Type === "volume").map((m) => m.Name)));
  return mountsUnder(bed.dir)
    .filter((m) => {
      const run = /\/exec\/(?:containers|netns)\/([a-f0-9]{64})(?:\/|$)/.exec(m);
      const volume = /\/data\/volumes\/([^/]+)\/_data$/.exec(m);
      return !(run && ids.has(run[1])) && !(volume && volumes.has(volume[1]));
    })
    .map((m) => `mount left: ${m.slice(bed.dir.length)}`);
}

/** Temporary files of every kind, anywhere in the state (the contents of layers and volumes not walked). */
function checkTemporaries(bed: KillBed): string[] {
  const problems: string[] = [];
  const leftover = (name: string) => name.startsWith(".tmp-") || name.startsWith(".removing-") || name.startsWith(".creating-") || /\.layout-/.test(name) || name.endsWith(".pending");
  const walk = (dir: string, depth: number) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return; // gone meanwhile
    }
    for (const e of entries) {
      if (leftover(e.name)) problems.push(`temporary file left: ${join(dir, e.name).slice(bed.dir.length)}`);
      if (depth > 0 && e.isDirectory() && e.name !== "_data" && e.name !== "overlay2") walk(join(dir, e.name), depth - 1);
    }
  };
  walk(bed.dataRoot, 4);
  for (const e of list(join(bed.dataRoot, "tmp", "image"))) problems.push(`temporary file left: tmp/image/${e}`);
  for (const e of list(join(bed.dataRoot, "overlay2"))) if (leftover(e)) problems.push(`temporary file left: overlay2/${e}`);
  return problems;
}

/** Volumes: the records and the local driver's folders agree. */
async function checkVolumes(bed: KillBed): Promise<string[]> {
  const problems: string[] = [];
  const listed = new Set(((await bed.ok<{ Volumes: { Name: string }[] | null }>("GET", "/volumes")).Volumes ?? []).map((v) => v.Name));
  const home = join(bed.dataRoot, "volumes");
  const folders = list(home).filter((n) => n !== "_meta" && n !== "metadata.db");
  for (const f of folders) if (!listed.has(f)) problems.push(`volume folder ${f.slice(0, 16)} is no volume the daemon lists`);
  for (const v of listed) if (!existsSync(join(home, v, "_data"))) problems.push(`volume ${v.slice(0, 16)} has no data folder`);
  return problems;
}

/** Networks in the daemon's namespace: bridges and rules of existing networks only; addresses held by running containers only. */
async function checkNetworks(bed: KillBed, ns: Netns, records: Map<string, Record_>): Promise<string[]> {
  const problems: string[] = [];
  const nets = await bed.ok<{ Id: string; Name: string; Driver: string }[]>("GET", "/networks");
  const bridges = new Set(nets.filter((n) => n.Driver === "bridge" && n.Name !== "bridge").map((n) => `br-${n.Id.slice(0, 12)}`));
  const links = ns.run("ip", "-o", "link", "show").split("\n").filter(Boolean).map((l) => l.split(": ")[1].split("@")[0]);
  for (const l of links) if (/^br-/.test(l) && !bridges.has(l)) problems.push(`bridge ${l} of no network`);
  for (const b of bridges) if (!links.includes(b)) problems.push(`network bridge ${b} missing`);
  const rules = ns.run("iptables-save");
  for (const b of new Set(rules.match(/br-[a-f0-9]{12}/g) ?? [])) if (!bridges.has(b)) problems.push(`iptables rules for ${b}, no network`);
  const running = [...records.values()].filter((c) => c.State.Running);
  const veths = links.filter((l) => /^veth/.test(l)).length;
  const endpoints = running.reduce((n, c) => n + (c.Endpoints?.length ?? 0), 0);
  if (veths !== endpoints) problems.push(`${veths} veth interfaces for ${endpoints} endpoints of running containers`);
  const owners = new Set(running.flatMap((c) => (c.Endpoints ?? []).map((e) => e.endpointId)));
  for (const f of list(join(bed.dataRoot, "network")).filter((f) => f.endsWith(".json"))) {
    const rec = JSON.parse(readFileSync(join(bed.dataRoot, "network", f), "utf8")) as { spec: { name: string }; ipam: { subnets: { allocated: Record<string, string> }[] } };
    for (const s of rec.ipam.subnets) {
      for (const [address, owner] of Object.entries(s.allocated)) if (owner && !owners.has(owner)) problems.push(`network ${rec.spec.name}: ${address} held for endpoint ${owner.slice(0, 12)}, which no running container has`);
    }
  }
  return problems;
}

/** Every check once; the problems found. */
export async function findProblems(bed: KillBed, ns?: Netns): Promise<string[]> {
  const records = containerRecords(bed);
  return [
    ...(await checkContainers(bed)),
    ...checkLayers(bed),
    ...checkMounts(bed, records),
    ...checkTemporaries(bed),
    ...(await checkVolumes(bed)),
    ...(ns ? await checkNetworks(bed, ns, records) : []),
  ];
}

/** The checks, again (bounded) while what a start cleans in the background is still going: the problems that stay. */
export async function settledProblems(bed: KillBed, ns?: Netns, ms = 5000): Promise<string[]> {
  const until = Date.now() + ms;
  let problems = await findProblems(bed, ns);
  while (problems.length > 0 && Date.now() < until) {
    await sleep(250);
    problems = await findProblems(bed, ns);
  }
  return problems;
}
