/**
 * core/archive's tree diff: the changes of a layer kept as a whole tree against its parent's
 * tree, on plain folders (a copy, not a snapshot: metadata only), and their OCI tar.
 */
import { setAttributeSync } from "@napi-rs/xattr";
import { execFileSync } from "node:child_process";
import { chmodSync, lstatSync, lutimesSync, mkdirSync, rmSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { packChanges, treeChanges, type TreeChange } from "../core/archive/index.js";
import { makeTempDir } from "./helpers/engined.js";
import "./helpers/root-hooks.js";
import { readTar } from "./storage-conformance.js";

const show = (changes: TreeChange[]) => changes.map((c) => `${c.kind}${c.opaque ? "+opaque" : ""} ${c.path}`);

describe("tree diff (core/archive)", () => {
  let parent: string;
  let layer: string;

  beforeEach(() => {
    const dir = makeTempDir("engine-tree-diff-");
    parent = join(dir, "parent");
    layer = join(dir, "layer");
    mkdirSync(join(parent, "etc"), { recursive: true });
    writeFileSync(join(parent, "etc", "hostname"), "one");
    writeFileSync(join(parent, "etc", "same"), "same");
    mkdirSync(join(parent, "cache"));
    for (const n of ["a", "b", "c"]) writeFileSync(join(parent, "cache", n), n);
    mkdirSync(join(parent, "one"));
    writeFileSync(join(parent, "one", "only"), "x");
    symlinkSync("hostname", join(parent, "etc", "link"));
    writeFileSync(join(parent, "tool"), "#!");
    writeFileSync(join(parent, "becomes-dir"), "f");
    execFileSync("cp", ["-a", parent, layer]); // times to the nanosecond, as a snapshot keeps them
  });

  it("finds nothing between two copies, and everything (added) without a parent", async () => {
    expect(await treeChanges(layer, parent)).to.deep.equal([]);
    const all = show(await treeChanges(layer, undefined));
    expect(all).to.include.members(["added etc", "added etc/hostname", "added cache/a", "added tool"]);
    expect(all.indexOf("added etc")).to.be.below(all.indexOf("added etc/hostname"));
  });

  it("lists additions, modifications and deletions in walk order, directories before what they hold", async () => {
    writeFileSync(join(layer, "etc", "hostname"), "two"); // same size: the mtime tells
    utimesSync(join(layer, "etc", "hostname"), new Date(1_600_000_000_000), new Date(1_600_000_000_000));
    writeFileSync(join(layer, "etc", "new"), "n");
    unlinkSync(join(layer, "etc", "link"));
    symlinkSync("same", join(layer, "etc", "link")); // another target, same length
    const was = lstatSync(join(parent, "etc", "link"));
    lutimesSync(join(layer, "etc", "link"), was.atime, was.mtime);
    rmSync(join(layer, "one", "only"));
    rmSync(join(layer, "becomes-dir"));
    mkdirSync(join(layer, "becomes-dir"));
    writeFileSync(join(layer, "becomes-dir", "inside"), "i");
    setAttributeSync(join(layer, "tool"), "security.capability", Buffer.from("0100000200200000000000000000000000000000", "hex"));
    expect(show(await treeChanges(layer, parent))).to.deep.equal([
      "modified becomes-dir",
      "added becomes-dir/inside",
      "modified etc",
      "modified etc/hostname",
      "modified etc/link",
      "added etc/new",
      "modified one",
      "deleted one/only",
      "modified tool",
    ]);
  });

  it("marks a directory that lost more than one entry and kept none opaque; one lost entry is a whiteout", async () => {
    for (const n of ["a", "b", "c"]) rmSync(join(layer, "cache", n));
    writeFileSync(join(layer, "cache", "fresh"), "f");
    rmSync(join(layer, "one", "only"));
    const changes = await treeChanges(layer, parent);
    expect(show(changes)).to.deep.equal(["modified+opaque cache", "added cache/fresh", "modified one", "deleted one/only"]);
    const tar = await readTar(packChanges(layer, changes));
    expect(tar.map((e) => `${e.name}:${e.type}`)).to.deep.equal(["cache:directory", "cache/.wh..wh..opq:file", "cache/fresh:file", "one:directory", "one/.wh.only:file"]);
  });

  it("lists a directory whose own mode changed even with nothing changed in it", async () => {
    chmodSync(join(layer, "one"), 0o700);
    expect(show(await treeChanges(layer, parent))).to.deep.equal(["modified one"]);
  });
});
