/**
 * The same Docker CLI command lines against engined and Docker's own daemon (where it is
 * installed), compared line by line, for images, networks and volumes: the values of a
 * `dangling` filter and their refusal, network list filters (`type`, `dangling` without the
 * builtin networks), a disconnect of a container not on the network, and a one-letter volume name.
 */
import "./helpers/root-hooks.js";
import { useComparedDaemons } from "./helpers/daemon-compare.js";

/** Docker 23 on writes "invalid filter" where 20.10 wrote "Invalid filter" (the values listed as before). */
const LOWER_INVALID = (line: string) => `{ ${line}; echo rc=$?; } 2>&1 | sed 's/daemon: Invalid filter/daemon: invalid filter/'`;

// (20.10 reads images' `dangling` itself, taking `true` over `false` and refusing `1` and `0`: not compared)
const COMMIT_CHANGES = [
  "docker create --pull never --name cc -e BASE=x busybox >/dev/null",
  "docker commit -c 'ENV A=1' -c 'ENV B=$A:$BASE' -c 'ONBUILD RUN true' -c 'ENTRYPOINT [\"echo\"]' -c 'WORKDIR a' -c 'WORKDIR b' cc cc:1 >/dev/null; docker image inspect -f '{{.Config.Env}} {{.Config.OnBuild}} {{.Config.Entrypoint}} {{.Config.Cmd}} {{.Config.WorkingDir}}' cc:1",
  "docker commit -c 'CMD x' -c 'ENTRYPOINT y' cc cc:2 >/dev/null; docker image inspect -f '{{.Config.Entrypoint}} {{.Config.Cmd}}' cc:2",
  // Docker 28 names the instruction as written; 20.10, compared here, in lower case
  "docker commit -c 'RUN true' cc cc:3 2>&1 | tr A-Z a-z",
  "docker commit -c 'bogus x' cc cc:3 2>&1 | tr A-Z a-z",
  "docker commit -c 'EXPOSE' cc cc:3",
  "docker commit -c 'EXPOSE 80 abc' cc cc:3",
  "docker commit -c 'ENV a' cc cc:3; docker commit -c 'LABEL' cc cc:3",
  "docker export cc | docker import -c 'ENV P=/a' -c 'ENV P=$P:/b' - ci:1 >/dev/null; docker image inspect -f '{{.Config.Env}}' ci:1",
];

/** A build of the Dockerfile on stdin (the Docker CLI adds it to the context under a random name) with an empty context. */
const DOCKERFILE_NAMES = [
  "d=$(mktemp -d); docker build --no-cache -f - $d <<< '' 2>&1 | tail -1 | sed -E 's/\\.dockerfile\\.[0-9a-f]+/.dockerfile.<r>/'; rm -r $d",
  "d=$(mktemp -d); printf '# only\\n' > $d/dockerfile; docker build --no-cache $d 2>&1 | tail -1; rm -r $d",
  // (Docker 28, BuildKit's parser, says "parse error on line N", 20.10 "parse error line N")
  "d=$(mktemp -d); printf 'FROM busybox\\nENV\\n' > $d/Dockerfile.bad; docker build --no-cache -f $d/Dockerfile.bad $d 2>&1 | tail -1 | sed 's/error on line/error line/'; rm -r $d",
];

const PRUNE_UNTIL = [
  "docker image prune -f --filter until=bogus",
  "docker container prune -f --filter until=bogus",
  "docker network prune -f --filter until=bogus",
  "docker image prune -f --filter until=2024-13-45",
  "docker image prune -f --filter until=1h30m",
  "docker container prune -f --filter until=2024-01-01",
  "docker container prune -f --filter until=2024-01-01T10:00:00Z",
  "docker container prune -f --filter until=1700000000.5",
  "docker network prune -f --filter until=10m",
];

const SAVE_EVENTS = [
  "docker tag busybox sv:1; docker save busybox busybox sv:1 >/dev/null; sleep 1; docker events --since 0 --until \"$(date +%s)\" --filter event=save --format '{{.Action}}' | wc -l",
];

/** manifest.json of a save: its entries, and every RepoTag of them. */
const SAVED = "tar -xO manifest.json | python3 -c 'import json,sys; m=json.load(sys.stdin); print(len(m), sorted(t for x in m for t in (x[\"RepoTags\"] or [])))'";

const REFERENCE_GLOBS = [
  "docker tag busybox gl:one; docker tag busybox gl:two; docker tag busybox gl:o-e; docker images --filter 'reference=gl:[ot]*' --format '{{.Tag}}' | sort",
  "docker images --filter 'reference=gl:[^o]*' --format '{{.Tag}}' | sort; docker images --filter 'reference=gl:o\\-e' --format '{{.Tag}}'",
  "docker images --filter 'reference=gl:[a-' --format '{{.Tag}}'",
  "docker images --filter 'reference=gl:[z-a]' --format '{{.Tag}}'; docker images 'gl:[t]wo' --format '{{.Tag}}'",
];

const VOLUME_LIST = [
  `curl -s --unix-socket "\${DOCKER_HOST#unix://}" 'http://x/v1.41/volumes' | python3 -c 'import json,sys; print(json.load(sys.stdin)["Warnings"])'`,
];

/** VirtualSize (the size again) in an image's inspect, its list and system df below API 1.44. */
const VIRTUAL_SIZE = [
  `curl -s --unix-socket "\${DOCKER_HOST#unix://}" 'http://x/v1.41/images/busybox/json' | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("VirtualSize") == d["Size"])'`,
  `curl -s --unix-socket "\${DOCKER_HOST#unix://}" 'http://x/v1.41/images/json' | python3 -c 'import json,sys; print([i.get("VirtualSize") == i["Size"] for i in json.load(sys.stdin)])'`,
];

const LONG_NAMES = [
  "n=$(printf 'n%.0s' $(seq 150)); docker network create $n >/dev/null; docker network inspect -f '{{.Name}}' $n | wc -c; docker network rm $n | wc -c",
  "v=$(printf 'v%.0s' $(seq 150)); docker volume create $v >/dev/null; docker volume inspect -f '{{.Name}}' $v | wc -c; docker volume rm $v | wc -c",
];

const SAVE_NAMES = [
  `docker build -q -t sn:one - <<< $'FROM busybox\\nLABEL a=1' >/dev/null; docker tag busybox sn:two; docker save sn | ${SAVED}`,
  `docker save sn:two busybox sn:two | ${SAVED}`,
  "docker save nosuch >/dev/null",
  "docker save sn:nosuch >/dev/null",
];

const VOLUME_MOUNTS = [
  "docker volume create --opt bogus=1 vb",
  "docker volume create --opt o=bind --opt type=none --opt device=/nonexistent vb3 >/dev/null; docker run --pull never --rm -v vb3:/d busybox true 2>&1 | sed -E 's#[^ :]*/volumes/#<ROOT>/volumes/#g'; echo rc=${PIPESTATUS[0]}",
  "docker volume create --opt type=tmpfs --opt device=tmpfs --opt o=size=1m,bogusopt vb4 >/dev/null; docker run --pull never --rm -v vb4:/d busybox true 2>&1 | sed -E 's#[^ :]*/volumes/#<ROOT>/volumes/#g'",
  "docker volume rm vb3 vb4",
];

const NETWORK_ORDER = [
  "docker network create --ipv6 --subnet fd00:1::/64 n6 >/dev/null; docker network inspect -f '{{range .IPAM.Config}}{{.Subnet}};{{end}}' n6 | sed -E 's/172\\.[0-9]+\\./172.X./'",
  "docker network create n7 >/dev/null; docker create --pull never --name nc7 --network n7 busybox >/dev/null; docker network connect --ip 10.0.0.3 n7 nc7",
  "docker network rm n6 n7 >/dev/null; echo done",
];

const DANGLING = [
  "docker tag busybox pi:1",
  LOWER_INVALID("docker images --filter dangling=maybe"),
  LOWER_INVALID("docker image prune -f --filter dangling=maybe"),
  LOWER_INVALID("docker volume ls --filter dangling=maybe"),
  LOWER_INVALID("docker volume ls --filter dangling=TRUE"),
  "docker rmi pi:1",
];

const NETWORKS = [
  "docker network create pn1 >/dev/null",
  "docker network ls --filter type=bad",
  "docker network ls --filter dangling=true --format '{{.Name}}' | sort",
  "docker network ls --filter dangling=false --format '{{.Name}}' | grep -c -E '^(host|none)$'",
  "docker network ls --filter dangling=maybe",
  "docker network ls --filter dangling=true --filter dangling=false",
  "docker create --pull never --name pc1 busybox >/dev/null",
  "docker network disconnect pn1 pc1",
  "docker run --pull never -d --name pc2 busybox sleep 30 >/dev/null",
  "docker network disconnect pn1 pc2",
  "docker network rm pn1",
];

const VOLUMES = [
  "docker volume create a",
  "docker volume create .",
  "docker run --pull never --rm -v b:/x busybox true",
  "docker volume create ab; docker volume rm ab",
  // a missing driver is named before a bad name (the local driver is what judges names)
  "docker volume create --driver nosuch x",
];

// Sizes as Docker counts them: everything but directories, a symlink its target's length; the
// init layer's /etc/mtab link not in a container's SizeRw
const SIZES = [
  "docker image inspect -f '{{.Size}}' busybox",
  "docker run --pull never --name sz busybox sh -c 'echo -n 1234567 > /f; ln -s /x/y/z /l'",
  "docker inspect -s -f '{{.SizeRw}}' sz",
  "docker create --pull never --name sz0 busybox true >/dev/null; docker inspect -s -f '{{.SizeRw}}' sz0",
  "docker run --pull never --rm -v szv:/d busybox sh -c 'echo -n 12345 > /d/f; ln -s /a/very/long/target /d/l; mkdir /d/sub'",
  "docker system df -v | grep '^szv '",
];

describe("engined answers as Docker's daemon does: image, network and volume filters and names", function () {
  this.timeout(300_000);
  const { itAnswersAlike } = useComparedDaemons();

  itAnswersAlike("reads a dangling filter as Go's GetBoolOrDefault does, and refuses other values with the values listed", DANGLING);

  itAnswersAlike("applies a commit's and an import's changes as Docker's builder dispatches them, and refuses the others in its words", COMMIT_CHANGES);

  itAnswersAlike("reads a prune's until as Docker's daemon reads it: a duration, a date or time, Unix seconds, else its words", PRUNE_UNTIL);

  itAnswersAlike("announces one save per image, however many of its names a save gives", SAVE_EVENTS);

  itAnswersAlike("matches a reference filter as Go's path.Match: classes, ranges, escapes, and its refusal of a malformed pattern", REFERENCE_GLOBS);

  itAnswersAlike("names the Dockerfile as given (or as found) when its lines cannot be read", DOCKERFILE_NAMES);

  itAnswersAlike("serves networks and volumes of names longer than a hundred characters", LONG_NAMES);

  itAnswersAlike("lists volumes with no warnings as null", VOLUME_LIST);

  itAnswersAlike("saves an image once with each tag its names give, and every tag of a repository named alone", SAVE_NAMES);

  itAnswersAlike("refuses a local volume's unknown option and fails a start whose volume cannot be mounted in Docker's words", VOLUME_MOUNTS);

  itAnswersAlike("lists a network's IPv4 subnets before its IPv6 ones, and checks a connect's settings before anything else", NETWORK_ORDER);

  itAnswersAlike("filters networks by type and dangling as Docker does, and names the container by its ID when it is not on the network", NETWORKS);

  itAnswersAlike("refuses a one-byte volume name as too short, once the driver is found", VOLUMES);

  itAnswersAlike("shows VirtualSize in an image's inspect and the list below API 1.44", VIRTUAL_SIZE);

  itAnswersAlike("counts an image's, a container's and a volume's bytes as Docker does, symlinks included", SIZES);
});
