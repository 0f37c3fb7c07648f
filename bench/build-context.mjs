// The build context bench/build.mjs sends: a multi-stage Dockerfile of twelve steps and a
// folder of a few thousand small files, written into a temp folder and packed into one tar
// (the same bytes for both daemons), with what the built image must hold.
import { createHash, randomBytes, randomInt } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import tarStream from "tar-stream";

/** Files per innermost folder, and innermost folders per top folder. */
const PER_FOLDER = 30;
const SUBFOLDERS = 10;

/**
 * Stage one writes files with RUN, copies the context's files, and records their checksum (the
 * md5 of their contents in path order) in files.md5; stage two copies stage one's /app. The
 * final image's command exits 0 only when that checksum is the one the bench expects ($EXPECTED),
 * so a run of the image shows that the COPY carried every file and every byte.
 */
export const DOCKERFILE = `FROM busybox AS base
ENV APP=/app GREETING=hello
WORKDIR /app
RUN mkdir -p generated && for i in $(seq 1 100); do echo "$GREETING $i" > generated/file$i.txt; done
COPY files/ /app/files/
RUN find files -type f | sort | xargs cat | md5sum | cut -d' ' -f1 > files.md5
RUN wc -l generated/* > generated.count && echo done > stamp

FROM busybox
WORKDIR /srv
COPY --from=base /app /srv/app
ENV MODE=bench
CMD ["sh", "-c", "test \\"$(cat /srv/app/files.md5)\\" = \\"$EXPECTED\\""]
`;

/** The Dockerfile's steps: FROM lines included, as the stream numbers them. */
export const STEPS = DOCKERFILE.split("\n").filter((l) => /^[A-Z]/.test(l)).length;
/** The steps a rebuild takes from the cache: all but the FROMs. */
export const CACHEABLE_STEPS = STEPS - DOCKERFILE.split("\n").filter((l) => l.startsWith("FROM ")).length;

/**
 * Writes `count` files of 1-4 KiB (random text) under `dir`/files/dNN/sNN/, and the Dockerfile;
 * gives `{ files, bytes, md5 }`: how many, their total size, and the md5 stage one must record.
 */
export function writeContext(dir, count) {
  const hash = createHash("md5");
  let bytes = 0;
  const paths = [];
  for (let i = 0; i < count; i++) {
    const folder = Math.floor(i / PER_FOLDER);
    const sub = join(dir, "files", `d${String(Math.floor(folder / SUBFOLDERS)).padStart(2, "0")}`, `s${String(folder % SUBFOLDERS).padStart(2, "0")}`);
    if (i % PER_FOLDER === 0) mkdirSync(sub, { recursive: true });
    const size = randomInt(1024, 4097);
    const file = join(sub, `f${String(i).padStart(5, "0")}.txt`);
    writeFileSync(file, randomBytes(size).toString("base64").slice(0, size));
    paths.push(file);
    bytes += size;
  }
  // the order of `sort` in the image: byte order of the paths (ASCII here)
  for (const file of paths.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) hash.update(readFileSync(file));
  writeFileSync(join(dir, "Dockerfile"), DOCKERFILE);
  return { files: count, bytes, md5: hash.digest("hex") };
}

/** The folder as a tar in memory (folders first, then their entries in name order), as a client sends it. */
export async function packContext(dir) {
  const pack = tarStream.pack();
  const chunks = [];
  const done = (async () => {
    for await (const c of pack) chunks.push(c);
  })();
  const entry = (header, data) => new Promise((res, rej) => pack.entry(header, data, (err) => (err ? rej(err) : res())));
  const walk = async (folder) => {
    for (const name of readdirSync(folder).sort()) {
      const path = join(folder, name);
      const st = statSync(path);
      const header = { name: relative(dir, path), mtime: st.mtime, uid: 0, gid: 0 };
      if (st.isDirectory()) {
        await entry({ ...header, name: `${header.name}/`, type: "directory", mode: 0o755 });
        await walk(path);
      } else {
        await entry({ ...header, mode: 0o644 }, readFileSync(path));
      }
    }
  };
  await walk(dir);
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}
