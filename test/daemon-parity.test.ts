/**
 * The same Docker CLI command lines against engined and Docker's own daemon (where it is
 * installed), compared line by line. Memory limits at create and update: Docker's minimums and pairs (refused at create; at update before the
 * update proper, without its "Cannot update" prefix), the swap limit it records as twice the
 * memory, what an update is held to, its warnings, and supplementary groups (the primary group
 * among them; /etc/group memberships only when no group is named; GroupAdd for execs too).
 * What Docker's init layer puts in every container (`/.dockerenv`, `/etc/mtab`...), seen from
 * inside, by `export` and by `cp`, and never by `diff` nor `commit`. Owner names in cp's and export's tars.
 * The checkpoint endpoints without experimental mode; resize's errors; execs of a stopped container.
 * `logs --details`. A body's keys in any case (Go's decoding).
 */
import "./helpers/root-hooks.js";
import { useComparedDaemons } from "./helpers/daemon-compare.js";

const LIMITS = [
  "docker create --pull never --name a1 -m 100m --memory-swap 50m busybox",
  "docker create --pull never --name a2 --memory-swap 50m busybox",
  "docker create --pull never --name a3 -m 1m busybox",
  "docker create --pull never --name a5 --memory-reservation 200m -m 100m busybox",
  "docker create --pull never --name a6 --memory-reservation 1m busybox",
  "docker create --pull never --name m1 -m 400m busybox sleep 30",
  "docker inspect -f '{{.HostConfig.Memory}} {{.HostConfig.MemorySwap}}' m1",
  "docker update -m 300m m1",
  "docker update -m 1g m1",
  "docker update -m 1g --memory-swap 2g m1",
  "docker inspect -f '{{.HostConfig.Memory}} {{.HostConfig.MemorySwap}}' m1",
  "docker create --pull never --name m2 busybox sleep 30",
  "docker update -m 100m m2",
  "docker update -m 100m --memory-swap -1 m2",
  "docker inspect -f '{{.HostConfig.Memory}} {{.HostConfig.MemorySwap}}' m2",
  "docker update -m 200m m2",
  "docker update --memory-swap 50m m1",
  "docker update --cpu-period 100 m1",
  "docker update --cpu-quota 500 m1",
  "docker update --cpus 1 --cpu-period 100000 m1",
  "docker update --memory-reservation 1m m1",
  "docker update -m 1m m1",
  "docker run --pull never -d --name m4 -m 50m busybox sleep 30",
  "docker update -m 60m m4",
  "docker inspect -f '{{.HostConfig.Memory}} {{.HostConfig.MemorySwap}}' m4",
  "docker exec m4 sh -c 'cat /sys/fs/cgroup/memory/memory.memsw.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.swap.max'",
  // the body alone (Go's encoder ends it with a newline)
  "echo \"$(curl -s --unix-socket ${DOCKER_HOST#unix://} -X POST -H 'Content-Type: application/json' -d '{\"CpuShares\":512}' http://x/containers/m4/update)\"",
];

const GROUPS = [
  "docker run --pull never --name groups busybox sh -c 'echo wheel:x:10:nobody >> /etc/group; echo audio:x:29:nobody,root >> /etc/group'",
  "docker commit groups grp >/dev/null",
  "docker run --pull never --rm grp id",
  "docker run --pull never --rm -u nobody grp id",
  "docker run --pull never --rm -u 65534 grp id",
  "docker run --pull never --rm -u nobody:wheel grp id",
  "docker run --pull never --rm -u nobody:audio --group-add audio --group-add 29 grp id",
  "docker run --pull never --rm -u 4321 grp id",
  "docker run --pull never --rm -u 4321:77 grp id",
  "docker run --pull never -d --name gx --group-add wheel grp sleep 30",
  "docker exec gx id",
  "docker exec -u nobody gx id",
  "docker exec -u nobody:audio gx id",
];

/** /info's RegistryConfig.IndexConfigs: the public index always (20.10 lists no ::1/128 among the insecure ranges, 28 does: not compared). */
const INDEX_CONFIGS = [
  `curl -s --unix-socket "\${DOCKER_HOST#unix://}" 'http://x/v1.41/info' | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["RegistryConfig"]["IndexConfigs"], sort_keys=True))'`,
];

const INIT_LAYER = [
  "docker run --pull never --rm busybox ls -a /",
  "docker run --pull never --rm busybox ls -la /etc/mtab /.dockerenv | cut -c1-40",
  "docker run --pull never --name fsx busybox sh -c 'mkdir /x; echo a > /x/f; rm /bin/ls'",
  "docker diff fsx | sort",
  "docker export fsx | tar t | grep -v '^bin/.' | sort",
  "docker cp fsx:/etc/mtab - | tar tv | cut -c1-10",
];

const OWNER_NAMES = [
  "docker run --pull never -d --name own busybox sh -c 'mkdir /d; touch /d/f; chown 4321:4321 /d/f; sleep 30'",
  "sleep 1; docker cp own:/d - | tar -tv | cut -c1-24",
  "docker export own | tar -tv | grep -E ' (d/|d/f|etc/passwd)$' | cut -c1-24",
];

/** The files of an image's layers above busybox's (docker save's manifest.json names them). */
const LAYERS_ABOVE_BASE = (image: string) =>
  `d=$(mktemp -d); docker save ${image} | tar -x -C $d; for l in $(python3 -c "import json;print(' '.join(json.load(open('$d/manifest.json'))[0]['Layers'][1:]))"); do tar -tf $d/$l | sort; done; rm -rf $d`;

const COMMITS = [
  "docker run --pull never --name c1 busybox true; docker commit c1 unchanged >/dev/null; docker inspect -f '{{len .RootFS.Layers}}' unchanged",
  LAYERS_ABOVE_BASE("unchanged"),
  "docker run --pull never --name c2 busybox sh -c 'echo x > /f; echo h >> /etc/hosts'; docker commit c2 changed >/dev/null; docker inspect -f '{{len .RootFS.Layers}}' changed",
  LAYERS_ABOVE_BASE("changed"),
  "docker create --pull never --name c3 busybox; docker cp c3:/etc/hosts - | tar -t; docker commit c3 created >/dev/null; docker inspect -f '{{len .RootFS.Layers}}' created",
];

/** `curl` of the daemon's API: the body and the status. */
const API = (method: string, path: string, body?: string) =>
  `curl -s -w ' %{http_code}' --unix-socket \${DOCKER_HOST#unix://} -X ${method}${body ? ` -H 'Content-Type: application/json' -d '${body}'` : ""} 'http://x/v1.41${path}'`;

const CHECKPOINTS_AND_RESIZE = [
  "docker create --pull never --name ck busybox >/dev/null",
  API("GET", "/containers/ck/checkpoints"),
  API("POST", "/containers/ck/checkpoints", '{"CheckpointID":"c1"}'),
  API("DELETE", "/containers/ck/checkpoints/c1"),
  API("GET", "/containers/nope/checkpoints"),
  // (a resize's bad sizes: Docker 28's words, which 20.10 did not have, in interactive.test.ts)
  API("POST", "/containers/ck/resize?h=10&w=10"),
];

const EXECS = [
  "docker create --pull never --name ex busybox sleep 30 >/dev/null; docker exec ex true; echo rc=$?",
  API("POST", "/containers/ex/exec", '{"Cmd":["true"]}'),
  // an exec of a container that stopped since is gone: start, resize and inspect are 404s
  // what the runtime could not start, in containerd's words around runc's
  // (the exit status of a command not found: 127 from Docker 28 on, 126 in 20.10; tested in cli-exec.test.ts)
  "docker start ex >/dev/null; docker exec ex nonexistent 2>&1; docker exec -w /nonexist ex pwd; echo rc=$?",
  `docker start ex >/dev/null; id=$(${API("POST", "/containers/ex/exec", '{"Cmd":["true"]}')} | cut -d'"' -f4); docker stop -t0 ex >/dev/null; for p in "POST /exec/$id/resize?h=1&w=1" "POST /exec/$id/start" "GET /exec/$id/json"; do set -- $p; curl -s -w ' %{http_code}\\n' --unix-socket \${DOCKER_HOST#unix://} -X $1 -H 'Content-Type: application/json' -d '{"Detach":true}' "http://x/v1.41$2" | sed "s/$id/ID/"; done`,
];

const OLD_API_ALIASES = [
  "docker network create al >/dev/null; docker run --pull never -d --name a1 --network al --network-alias web busybox sleep 30 >/dev/null",
  "DOCKER_API_VERSION=1.41 docker inspect -f '{{json .NetworkSettings.Networks.al.Aliases}}' a1",
  "docker rm -f a1 >/dev/null; docker network rm al",
];

const EVENT_FILTERS = [
  "docker events --since 0 --until 1 --filter nosuch=1; echo rc=$?",
  "docker events --since 10 --until 5; echo rc=$?",
];

/** Refusals both word alike (dockerd 20.10 answers others of this kind with a 500: test/api-docker-behaviours.test.ts). */
const REFUSALS = [
  "docker create --pull never --name nostream busybox >/dev/null",
  API("GET", "/containers/nostream/logs"),
  API("POST", "/images/create?fromImage=busybox&tag=bad:tag"),
  // (and an answer of Go's encoder ends with a newline, a `null` too)
  API("GET", "/containers/nostream/changes"),
  // a download that cannot connect, in Go's words (the port is on the daemon's own loopback,
  // which is down in dockerd's namespace here and up in engined's: the errno's text is not compared)
  "docker import http://127.0.0.1:1/x.tar imp 2>&1 | sed -E 's/connect: (connection refused|network is unreachable)$/connect: ERRNO/'",
];

/** The names of a JSON answer's fields, in the order the daemon wrote them. */
const FIELDS = (path: string, first = false) =>
  `curl -s --unix-socket \${DOCKER_HOST#unix://} 'http://x/v1.41${path}' | python3 -c 'import json,sys; d=json.load(sys.stdin); print(list(d[0] if ${first ? "True" : "False"} else d))'`;

const FIELD_ORDER = [
  "docker run --pull never -d --name fo busybox sleep 30 >/dev/null; docker create --pull never --name fo2 busybox true >/dev/null",
  FIELDS("/containers/fo/stats?stream=false"),
  FIELDS("/containers/fo2/stats?stream=false"),
  FIELDS("/images/busybox/history", true),
  "docker rm -f fo fo2 >/dev/null",
];

const LOG_DETAILS = [
  "docker run --pull never --name l1 busybox echo out",
  "docker logs --details l1",
  "docker run --pull never --name l2 --log-opt labels=a --log-opt env=E -e 'E=v w' -l a=b busybox echo x",
  "docker logs --details l2",
  "docker logs --details -t l2 | cut -c31-",
];

/** A create's body sent as it is; the new container's name is `name`. */
const CREATE = (name: string, body: string) =>
  `curl -s -o /dev/null -w '%{http_code} ' --unix-socket \${DOCKER_HOST#unix://} -H 'Content-Type: application/json' -d '${body}' 'http://x/v1.41/containers/create?name=${name}'`;

// Go's decoder: a key matches a field in any case, at every depth; the last of two spellings
// wins; a map's keys (labels, options) stay as they are
const BODY_KEYS = [
  CREATE("k1", '{"image":"busybox","cmd":["true"],"labels":{"Image":"x","cmd":"y"},"hostconfig":{"restartpolicy":{"name":"on-failure","maximumretrycount":3}}}'),
  "docker inspect -f '{{.Config.Image}} {{json .Config.Cmd}} {{json .Config.Labels}} {{json .HostConfig.RestartPolicy}}' k1",
  CREATE("k2", '{"Image":"busybox","HostConfig":{"Memory":8388608,"memory":16777216}}'),
  CREATE("k3", '{"Image":"busybox","HostConfig":{"memory":16777216,"Memory":8388608}}'),
  CREATE("k4", '{"Image":"busybox","HostConfig":{"MEMORY":16777216,"memory":8388608,"logconfig":{"type":"json-file","config":{"max-size":"1m"}}}}'),
  "docker inspect -f '{{.HostConfig.Memory}} {{json .HostConfig.LogConfig}}' k2 k3 k4",
  "docker network create kn >/dev/null",
  CREATE("k5", '{"Image":"busybox","HostConfig":{"NetworkMode":"kn"},"NetworkingConfig":{"endpointsconfig":{"kn":{"aliases":["a"]}}}}'),
  "docker inspect -f '{{json .NetworkSettings.Networks.kn.Aliases}}' k5",
  "docker rm k5 >/dev/null; docker network rm kn",
];

describe("engined answers as Docker's daemon does: limits, groups, the init layer, owner names, log details", function () {
  this.timeout(300_000);
  const { itAnswersAlike } = useComparedDaemons();

  itAnswersAlike("refuses, records and updates memory limits as Docker does", LIMITS);

  itAnswersAlike("gives a container's and an exec's user Docker's supplementary groups", GROUPS);

  itAnswersAlike("puts Docker's init layer entries in every container, out of its changes", INIT_LAYER);

  itAnswersAlike("reports the public index among the registries' index configs", INDEX_CONFIGS);

  itAnswersAlike("names the owners in cp's and export's tars as the host names them (root/root), the number where it has no name", OWNER_NAMES);

  itAnswersAlike("commits only what the container changed: not the init layer's entries nor the network files' mount points", COMMITS);

  itAnswersAlike("answers the checkpoint endpoints (experimental) and a resize of a stopped container as Docker does", CHECKPOINTS_AND_RESIZE);

  itAnswersAlike("refuses an exec in a stopped container with Docker's words, and forgets a container's execs when it stops", EXECS);

  itAnswersAlike("lists the short ID among a container's aliases on a user-defined network below API 1.45", OLD_API_ALIASES);

  itAnswersAlike("takes an events filter key it does not know without refusing it, and refuses since after until", EVENT_FILTERS);

  itAnswersAlike("reads a body's keys in any case at every depth, the last of two spellings, and a map's keys as they are", BODY_KEYS);

  itAnswersAlike("refuses logs without a stream, a pull's bad tag and an import it cannot download in Docker's words", REFUSALS);

  itAnswersAlike("writes each log line's attributes before it with --details", LOG_DETAILS);

  itAnswersAlike("writes the stats' and the history's fields in Docker's order", FIELD_ORDER);
});
