/**
 * The archives the API fuzz sends (test/api-fuzz.test.ts), made once before it starts: build
 * contexts with good and bad Dockerfiles, layer tars for imports and `docker cp`, and image
 * archives for loads, many with entries that try to climb out of where they are unpacked
 * (`../`, absolute names, symlinks and hard links out, a `manifest.json` naming files
 * outside). Every file such an entry would write is named with the run's canary, so that a
 * write that escaped can be found afterwards (`escapedCanaries`).
 */
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { dockerSaveTar, imageOf, makeTar, ociLayoutTar, type TarEntry } from "../fixtures/images.js";
import { filesUnder } from "./daemon-leftovers.js";
import { patchTarHeader } from "./fuzz-values.js";

export interface ArchivePool {
  /** `POST /build` bodies. */
  contexts: Buffer[];
  /** Layer tars: `POST /images/create?fromSrc=-` and `PUT /containers/{id}/archive`. */
  layers: Buffer[];
  /** `POST /images/load` bodies. */
  images: Buffer[];
}

/** The escape attempts, as tar entries whose files are named `<canary>-<n>`. */
function escapes(canary: string): TarEntry[][] {
  const up = "../".repeat(12);
  return [
    [{ name: `${up}tmp/${canary}-1`, data: "escaped" }],
    [{ name: `/tmp/${canary}-2`, data: "absolute" }],
    [{ name: "a/", type: "directory" }, { name: `a/../../${canary}-3`, data: "climbed" }],
    [{ name: "out", type: "symlink", linkname: "/tmp" }, { name: `out/${canary}-4`, data: "through a symlink" }],
    [{ name: "up", type: "symlink", linkname: up.slice(0, -1) }, { name: `up/tmp/${canary}-5`, data: "through a relative symlink" }],
    [{ name: "pw", type: "link", linkname: "/etc/passwd" }],
    [{ name: "pw2", type: "link", linkname: `${up}etc/hostname` }],
    [{ name: "d", type: "symlink", linkname: "/tmp" }, { name: "d", type: "directory" }, { name: `d/${canary}-6`, data: "symlink replaced by a directory" }],
    [{ name: ".wh..wh..opq", data: "" }, { name: `.wh.${up}tmp`, data: "" }],
  ];
}

const DOCKERFILES = [
  "FROM scratch\nCOPY a /a\n",
  "FROM fz-base\nRUN true\n",
  "FROM fz-base\nRUN [\"/nonexistent\"]\n",
  "FROM scratch\nCOPY ../../../../etc/passwd /x\n",
  "FROM scratch\nCOPY / /\n",
  "FROM scratch\nADD http://127.0.0.1:1/x /x\n",
  "FROM scratch\nADD a ../../../../tmp/\n",
  "FROM fz-base AS one\nFROM one\nCOPY --from=one /bin/sh /sh\n",
  "FROM scratch\nCOPY --from=nonexistent / /\n",
  "",
  "\u0000\u0001\u0002",
  "FROM\n",
  "RUN true\n",
  "FROM scratch\nFOO bar\n",
  "FROM ${X:?unset}\n",
  "ARG A=${B:-${C:-${D}}}\nFROM scratch\nENV E=${A}\n",
  "FROM scratch\nONBUILD ONBUILD RUN true\n",
  "FROM scratch\nWORKDIR ../../..\nCOPY . .\n",
  "FROM scratch\nHEALTHCHECK --interval=-1s CMD true\n",
  "FROM scratch\nEXPOSE 99999999/tcp\n",
  "FROM scratch\nVOLUME [\"\"]\n",
  "FROM scratch\nSTOPSIGNAL SIGFOO\n",
  "FROM scratch\nLABEL =\n",
  "# escape=`\nFROM scratch\nCOPY a `\n  /a\n",
  "# escape=x\nFROM scratch\n",
  "FROM scratch\nENTRYPOINT [\"unterminated\n",
  "FROM scratch\nCOPY --chown=nobody:nogroup a /a\n",
  "FROM scratch\nCOPY --chmod=99999 a /a\n",
  "FROM scratch AS \u00fc\n",
  "FROM fz-base\nUSER ../..\nRUN true\n",
  `FROM scratch\nLABEL x=${"y".repeat(100_000)}\n`,
  "FROM scratch\n" + "ENV A=1\n".repeat(2000),
];

/** Build contexts: each Dockerfile alone, with a file, and with an escape attempt; and contexts whose Dockerfile is not a file. */
async function contexts(canary: string): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for (const [i, text] of DOCKERFILES.entries()) {
    const escape = escapes(canary)[i % escapes(canary).length];
    out.push(await makeTar([{ name: "Dockerfile", data: text }, { name: "a", data: "a file" }]));
    if (i % 3 === 0) out.push(await makeTar([{ name: "Dockerfile", data: text }, { name: "a", data: "a" }, ...escape]));
  }
  out.push(await makeTar([{ name: "a", data: "no Dockerfile" }]));
  out.push(await makeTar([{ name: "Dockerfile/", type: "directory" }]));
  out.push(await makeTar([{ name: "Dockerfile", type: "symlink", linkname: "/etc/passwd" }]));
  out.push(await makeTar([{ name: "Dockerfile", type: "symlink", linkname: "../../../../etc/passwd" }]));
  out.push(await makeTar([{ name: "Dockerfile", data: DOCKERFILES[0] }, { name: "a", data: "a" }, { name: ".dockerignore", data: "[\n**/**/**\n!\n\\\n../\n" }]));
  out.push(await makeTar([{ name: "sub/Dockerfile", data: DOCKERFILES[0] }, { name: "sub/a", data: "a" }]));
  out.push(gzipSync(await makeTar([{ name: "Dockerfile", data: DOCKERFILES[0] }, { name: "a", data: "a" }])));
  return out;
}

async function layers(canary: string): Promise<Buffer[]> {
  const plain = await makeTar([{ name: "fz/", type: "directory" }, { name: "fz/a", data: "a file" }]);
  const out = [plain, gzipSync(plain)];
  for (const entries of escapes(canary)) out.push(await makeTar([{ name: "fz/", type: "directory" }, ...entries]));
  // headers a reader must refuse or bound: a size far past the data, unknown and special types, a
  // name that climbs out written into the raw header
  out.push(patchTarHeader(plain, 1, "size", "77777777777"));
  out.push(patchTarHeader(plain, 1, "size", "-1"));
  out.push(patchTarHeader(plain, 1, "type", "x"));
  out.push(patchTarHeader(plain, 1, "type", "3"));
  out.push(patchTarHeader(plain, 1, "type", "L"));
  out.push(patchTarHeader(plain, 1, "name", `../../../../../../tmp/${canary}-7`));
  out.push(patchTarHeader(plain, 1, "mode", "99999999"));
  out.push(patchTarHeader(plain, 1, "uid", "-12"));
  out.push(patchTarHeader(plain, 0, "name", "\u00ff\u00fe"));
  return out;
}

/** `docker save` archives and OCI layouts: one that loads, and ones whose indexes lie. */
async function images(canary: string): Promise<Buffer[]> {
  const layer = await makeTar([{ name: "fz/", type: "directory" }, { name: "fz/loaded", data: "loaded" }]);
  const image = imageOf([layer]);
  const good = await dockerSaveTar([{ image, tags: ["fz-loaded:latest"] }]);
  const hex = image.id.slice(7);
  const manifest = (m: unknown) => makeTar([{ name: `${hex}.json`, data: image.config }, { name: "l/layer.tar", data: layer }, { name: "manifest.json", data: JSON.stringify(m) }]);
  return [
    good,
    gzipSync(good),
    await ociLayoutTar(image, "fz-oci:latest"),
    await manifest([{ Config: `../../../../etc/passwd`, RepoTags: [], Layers: [] }]),
    await manifest([{ Config: `${hex}.json`, RepoTags: ["fz-loaded:1"], Layers: [`../../../../tmp/${canary}-8`] }]),
    await manifest([{ Config: `${hex}.json`, RepoTags: ["BAD TAG", "a@sha256:1"], Layers: ["l/layer.tar"] }]),
    await manifest([{ Config: `${hex}.json`, RepoTags: ["fz-loaded:2"], Layers: [] }]),
    await manifest([{ Config: `${hex}.json`, RepoTags: ["fz-loaded:3"], Layers: ["l/layer.tar", "l/layer.tar"] }]),
    await manifest({ Config: 1 }),
    await manifest([null]),
    await manifest([{ Config: "/dev/zero", Layers: ["/dev/zero"] }]),
    await makeTar([{ name: "manifest.json", data: "[{" }]),
    await makeTar([{ name: "repositories", data: '{"fz":{"latest":"../../x"}}' }, { name: "x/json", data: "{}" }]),
    await makeTar([{ name: "oci-layout", data: '{"imageLayoutVersion":"1.0.0"}' }, { name: "index.json", data: '{"manifests":[{"digest":"sha256:../../x"}]}' }]),
    await makeTar([{ name: "oci-layout", data: "{}" }, { name: "index.json", data: '{"manifests":[{"digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000","size":-1}]}' }]),
    await makeTar([{ name: "manifest.json", type: "symlink", linkname: "/etc/passwd" }]),
    await makeTar([{ name: "manifest.json", type: "directory" }]),
  ];
}

export async function archivePool(canary: string): Promise<ArchivePool> {
  return { contexts: await contexts(canary), layers: await layers(canary), images: await images(canary) };
}

/**
 * Canary files outside every container: in the folders an escape from a container, a layer or a
 * build context would reach (`/`, `/tmp`, `/etc`, and the test daemon's folders, walked to a
 * bounded depth, leaving out the container and layer trees where the files belong).
 */
export function escapedCanaries(canary: string, daemonDir: string): string[] {
  const named = (dir: string, depth: number, skip?: (name: string) => boolean) =>
    filesUnder(dir, depth, skip).filter((f) => f.replace(/\/$/, "").split("/").pop()!.startsWith(canary)).map((f) => join(dir, f));
  // a container's own files (its layer's `diff`, its `merged` view, its rootfs) may hold them
  const containers = (name: string) => ["diff", "merged", "rootfs"].includes(name);
  return [...["/", "/tmp", "/etc"].flatMap((dir) => named(dir, 0)), ...named(daemonDir, 6, containers)];
}
