/**
 * `docker rmi` by Docker's rules (moby's image_delete.go), through the Docker CLI: the same
 * command lines against engined and, where it is installed, Docker's own daemon, compared
 * (IDs normalised); and what Docker does to the layers of an image removed with force from
 * under a stopped container: the image goes, the container still starts, across a restart of
 * the daemon too, and the layers go with the container.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { compareDaemons, removeAllContainers } from "./helpers/daemon-compare.js";
import { docker } from "./helpers/docker-cli.js";
import { have, startDockerd, type Dockerd } from "./helpers/dockerd.js";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

/** Command lines run in order against each daemon (`$TAR`: a busybox root filesystem tar). */
const SCRIPT = [
  // by name, by ID, with force, while a stopped container uses the image
  "docker tag busybox bb:1",
  "docker create --pull never --name c1 bb:1 true",
  "docker rmi bb:1",
  "docker ps -a --format '{{.Names}} {{.Image}}'",
  "docker rmi busybox",
  "docker rmi $(docker inspect -f '{{.Image}}' c1)",
  "docker rmi -f $(docker inspect -f '{{.Image}}' c1)",
  "docker images -a --format '{{.Repository}}:{{.Tag}}'",
  "docker ps -a --format '{{.Names}} {{.Image}}'",
  "docker ps -a --no-trunc --format '{{.Names}} {{.Image}}'",
  "docker start -a c1; echo rc=$?",
  "docker run --pull never --rm $(docker inspect -f '{{.Image}}' c1) true",
  "docker rm c1",
  "docker images -a --format '{{.Repository}}:{{.Tag}}'",
  // a running container's image: its names go with force, the image never
  "docker import --change 'CMD [\"sh\"]' $TAR run:1",
  "docker run --pull never -d --name r1 run:1 sleep 30",
  "docker rmi run:1",
  "docker rmi -f $(docker inspect -f '{{.Image}}' r1)",
  "docker rmi -f run:1",
  "docker images --format '{{.Repository}}:{{.Tag}}'",
  "docker ps --format '{{.Names}} {{.Image}}'",
  "docker rm -f r1",
  // two repositories, and a name of several
  "docker import --change 'CMD [\"sh\"]' $TAR multi:1",
  "docker tag multi:1 other:1",
  "docker tag multi:1 multi:2",
  // a filtered list shows only the names that match of an image
  "docker images -f 'reference=other*' --format '{{.Repository}}:{{.Tag}}'",
  "docker images multi --format '{{.Repository}}:{{.Tag}}'",
  "docker images -f 'reference=*:2' --format '{{.Repository}}:{{.Tag}}'",
  "docker rmi $(docker inspect -f '{{.Id}}' multi:1)",
  "docker create --pull never --name m1 multi:1 true",
  "docker rmi multi:2",
  "docker rmi -f $(docker inspect -f '{{.Id}}' multi:1)",
  "docker ps -a --format '{{.Names}} {{.Image}}'",
  "docker rm m1",
  // a parent of a committed image
  "docker import --change 'CMD [\"sh\"]' $TAR base:1",
  "docker create --pull never --name p2 base:1 true",
  "docker commit p2 child:1",
  "docker rm p2",
  "docker rmi $(docker inspect -f '{{.Id}}' base:1)",
  "docker rmi -f $(docker inspect -f '{{.Id}}' base:1)",
  "docker rmi base:1",
  "docker images -a --format '{{.Repository}}:{{.Tag}}'",
  // a prune of all takes unnamed images too
  "docker image prune -af | grep -c '^deleted: '",
  "docker images -a --format '{{.Repository}}:{{.Tag}}'",
];


describe("image removal by Docker's rules", function () {
  this.timeout(300_000);
  let d: TestDaemon;
  let ref: Dockerd | undefined;
  let tar: string;
  let dataRoot: string;

  const cli = async (host: string, ...args: string[]) => {
    const r = await docker(host, args);
    expect(r.code, `docker ${args.join(" ")}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  const start = async () => {
    d = await startEngined({ args: ["--data-root", dataRoot] });
  };
  const engined = () => `unix://${d.socket}`;
  const layerDirs = () => readdirSync(join(dataRoot, "overlay2")).filter((n) => /^[a-f0-9]{64}$/.test(n)).length;

  before(async function () {
    const work = makeTempDir("engine-rmi-");
    dataRoot = join(work, "data");
    tar = writeFixture(work, "rootfs.tar", await busyboxRootfs());
    await start();
    if (have("dockerd")) ref = await startDockerd();
  });
  beforeEach(async function () {
    for (const host of [engined(), ...(ref ? [ref.host] : [])]) {
      await removeAllContainers(host);
      await cli(host, "import", "--change", 'CMD ["sh"]', tar, "busybox");
    }
  });
  afterEach(async function () {
    for (const host of [engined(), ...(ref ? [ref.host] : [])]) await removeAllContainers(host);
  });
  after(async function () {
    await d?.stop();
    await ref?.stop();
  });

  it("answers each removal as Docker's daemon does: conflicts, untags, deletions, and the lists after", async function () {
    if (!ref) this.skip();
    expect(compareDaemons({ engined: engined(), dockerd: ref!.host }, SCRIPT, { TAR: tar }), "lines answered differently").to.equal("");
  });

  it("keeps a force-removed image's layers for its stopped container, across a restart, and frees them with it", async function () {
    // no other image shares busybox's layer (the first test's imports of the same tar would)
    await cli(engined(), "image", "prune", "-af");
    await cli(engined(), "import", "--change", 'CMD ["sh"]', tar, "busybox");
    const before = layerDirs();
    await cli(engined(), "run", "--name", "keep", "busybox", "sh", "-c", "echo one > /f");
    const id = (await cli(engined(), "inspect", "-f", "{{.Image}}", "keep")).trim();
    const removed = await cli(engined(), "rmi", "-f", id);
    expect(removed).to.equal(`Untagged: busybox:latest\nDeleted: ${id}\n`);
    const gone = await docker(engined(), ["image", "inspect", id]);
    expect(gone.code).to.equal(1);
    expect(gone.stderr).to.include(`No such image: ${id}`);

    await d.stop();
    await start();
    // the container's layer and the image's under it are all still there, and it runs
    expect(await cli(engined(), "start", "-a", "keep")).to.equal("");
    expect((await cli(engined(), "cp", "keep:/f", "-")).length).to.be.greaterThan(0);
    expect((await cli(engined(), "ps", "-a", "--format", "{{.Image}}")).trim()).to.equal(id.slice("sha256:".length, "sha256:".length + 12));
    expect(layerDirs()).to.equal(before + 1);

    await cli(engined(), "rm", "keep");
    expect(layerDirs()).to.equal(before - 1);
    expect((await cli(engined(), "images", "-aq")).trim()).to.equal("");
  });
});
