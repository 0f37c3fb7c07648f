/**
 * core/archive's applyLayer against hostile tars, as root: names with `..` or absolute, files
 * written through symlinks that point out of the layer, hard links out of it, whiteouts through
 * symlinks, devices, and entries that replace one another; in each whiteout mode ("overlay",
 * "remove", "oci"). Each must fail naming the entry or land inside the layer folder, and nothing
 * outside it (the temporary folder around it, /etc, /) may change.
 */
import "./helpers/root-hooks.js";
import { getAttributeSync, listAttributesSync } from "@napi-rs/xattr";
import { expect } from "chai";
import { createHash } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LayerEntryError } from "../core/archive/index.js";
import { HOST_ESCAPE_NAME, hostileLayers, longPath } from "./fixtures/layers.js";
import { makeTempDir } from "./helpers/engined.js";
import { apply } from "./helpers/layer-archive.js";

/** Everything under `dir` but `skip` and what is under it: type, size, mode, owner, times, contents, xattrs. */
function snapshot(dir: string, skip: string): Map<string, string> {
  const out = new Map<string, string>();
  const visit = (path: string) => {
    if (path === skip) return;
    const st = lstatSync(path, { bigint: true });
    let content = "";
    if (st.isFile()) content = createHash("sha256").update(readFileSync(path)).digest("hex");
    else if (st.isSymbolicLink()) content = readlinkSync(path);
    const xattrs = listAttributesSync(path)
      .sort()
      .map((k) => `${k}=${getAttributeSync(path, k)?.toString("hex")}`);
    out.set(path, [st.mode, st.uid, st.gid, st.size, st.mtimeNs, st.ctimeNs, st.nlink, content, xattrs.join(",")].join(" "));
    if (st.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(dir);
  return out;
}

describe("layer archive", function () {
  this.timeout(120_000);

  describe("applyLayer: hostile tars", () => {
    /** What the hostile tars would create on the machine itself through symlinks to `/`. */
    const HOST_TARGETS = ["/evil", "/c", `/etc/${HOST_ESCAPE_NAME}`];
    before(() => {
      for (const p of HOST_TARGETS) expect(existsSync(p), `${p} exists before the tests`).to.equal(false);
    });

    /** What each hostile tar must do: fail naming this entry, or land these paths in the layer. */
    const expected = (outside: string): Record<string, { rejects: string } | { contains: string[] }> => ({
      "dotdot name": { rejects: "../evil" },
      "absolute name": { contains: ["abs/evil"] },
      "dotdot inside a name": { rejects: "a/../../evil" },
      "symlink to / then a file through it": { contains: ["evil", `etc/${HOST_ESCAPE_NAME}`] },
      "symlink to ../../ then a file through it": { contains: ["evil", "root/outside-file"] },
      "symlink to a directory outside then a file through it": { contains: [`${outside.slice(1)}/passwd`, "etc/shadow"] },
      "symlink then a directory entry over it": { contains: ["d"] },
      "symlink then a regular file at the same name": { contains: ["victim"] },
      "a directory holding a symlink outside, then a file over the directory": { contains: ["dir"] },
      "symlinks chained outside": { contains: ["c/evil"] },
      "symlink loop": { rejects: "loop1/evil" },
      "hard link to ../outside-file": { rejects: "hl" },
      "hard link to /etc/passwd": { rejects: "hl" },
      "hard link through a symlink": { rejects: "hl" },
      "whiteout through a symlink": { contains: [] },
      "opaque marker through a symlink": { contains: [] },
      "whiteout of ..": { rejects: "x/.wh..." },
      "whiteout dropped after its directory became a symlink outside": { contains: ["k"] },
      "character device": { rejects: "dev/sda" },
      fifo: { rejects: "run/fifo" },
      "a very long path": { contains: [`${longPath()}/file`] },
      "file then directory at the same path": { contains: ["dup/inner"] },
      "directory then file at the same path": { contains: ["dup"] },
    });

    const names = Object.keys(hostileLayers("/x"));
    for (const mode of ["overlay", "remove", "oci"] as const) {
      for (const name of names) {
        it(`${name} (${mode})`, async () => {
          const tmp = makeTempDir("engine-hostile-");
          const root = join(tmp, "root");
          const layer = join(root, "layer");
          const etc = join(root, "etc");
          mkdirSync(join(etc, "sub/dir"), { recursive: true });
          mkdirSync(layer);
          writeFileSync(join(etc, "passwd"), "root:x:0:0:root:/root:/bin/bash\n");
          writeFileSync(join(etc, "shadow"), "root:*:19000:0:99999:7:::\n", { mode: 0o640 });
          writeFileSync(join(etc, "sub/dir/x"), "x");
          writeFileSync(join(etc, ".wh.passwd"), ""); // what a whiteout kept as a file must never reach
          writeFileSync(join(root, "outside-file"), "outside\n");
          writeFileSync(join(tmp, "outside-file"), "outside too\n");
          const want = expected(etc)[name];
          const before = snapshot(tmp, layer);
          const passwd = statSync("/etc/passwd", { bigint: true });
          const hostBefore = { root: readdirSync("/").sort(), etc: readdirSync("/etc").sort() };

          let result: Error | undefined;
          try {
            result = await apply(hostileLayers(etc)[name], layer, { whiteouts: mode }).then(
              () => undefined,
              (e: Error) => e,
            );
          } finally {
            // should an extractor ever escape, leave the machine as it was (the checks below fail)
            // (the `before` hook made sure none of these existed)
            for (const p of HOST_TARGETS) rmSync(p, { recursive: true, force: true });
          }

          expect(snapshot(tmp, layer)).to.deep.equal(before);
          const passwdAfter = statSync("/etc/passwd", { bigint: true });
          expect([passwdAfter.mtimeNs, passwdAfter.ctimeNs, passwdAfter.size]).to.deep.equal([passwd.mtimeNs, passwd.ctimeNs, passwd.size]);
          expect({ root: readdirSync("/").sort(), etc: readdirSync("/etc").sort() }).to.deep.equal(hostBefore);
          if ("rejects" in want) {
            expect(result, "the apply should fail").to.be.instanceOf(LayerEntryError);
            expect(result!.message).to.include(`"${want.rejects}"`);
          } else {
            expect(result, result?.stack).to.equal(undefined);
            for (const p of want.contains) expect(existsSync(join(layer, p)), p).to.equal(true);
          }
          if (name === "symlink then a directory entry over it") expect(lstatSync(join(layer, "d")).isDirectory()).to.equal(true);
          if (name === "symlink then a regular file at the same name") expect(readFileSync(join(layer, "victim"), "utf8")).to.equal("replaced\n");
          if (name === "directory then file at the same path") expect(readFileSync(join(layer, "dup"), "utf8")).to.equal("file last\n");
        });
      }
    }
  });
});
