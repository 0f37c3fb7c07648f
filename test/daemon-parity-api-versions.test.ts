/**
 * Requests at the older API versions Debian's dockerd 20.10 serves (up to 1.41), against
 * engined and dockerd, compared line by line: what a request means, and what its answer holds,
 * at the version its client speaks (Docker's routes read some parameters and fields from a
 * version on, and shape some answers for the versions before one).
 */
import "./helpers/root-hooks.js";
import { useComparedDaemons } from "./helpers/daemon-compare.js";

/** A request over the daemon's socket (`curl` with the rest of the line's arguments). */
const CURL = `curl -s --unix-socket "\${DOCKER_HOST#unix://}"`;
/** Python reading the JSON answer on stdin as `d`, printing what `expr` makes of it. */
const py = (expr: string) => `python3 -c 'import json,sys; d=json.load(sys.stdin); ${expr}'`;

const IMAGE_NAMES = [
  // below API 1.43 an image without names is <none>:<none> / <none>@<none>, and an empty list of either is null
  `docker create --pull never --name pv1 busybox true >/dev/null; docker commit pv1 >/dev/null; ${CURL} 'http://x/v1.41/images/json' | ${py('[print(i["RepoTags"], i["RepoDigests"]) for i in d]')}`,
  // below API 1.41 the older `filter` is a reference filter more
  `docker tag busybox pvx:1; ${CURL} 'http://x/v1.40/images/json?filter=pvx*' | ${py('print(sorted(t for i in d for t in i["RepoTags"]))')}`,
  `${CURL} 'http://x/v1.41/images/json?filter=pvx*' | ${py('print(len(d))')}`,
];

const NETWORK_LIST = [
  // below API 1.28 each network of the list has its containers
  "docker network create pvn >/dev/null; docker run --pull never -d --name pv2 --network pvn busybox sleep 30 >/dev/null",
  `${CURL} 'http://x/v1.27/networks' | ${py('[print(n["Name"], len(n["Containers"])) for n in d if n["Name"] == "pvn"]')}`,
  `${CURL} 'http://x/v1.28/networks' | ${py('[print(n["Name"], len(n.get("Containers") or {})) for n in d if n["Name"] == "pvn"]')}`,
  "docker rm -f pv2 >/dev/null; docker network rm pvn",
];

const CONTAINER_REQUESTS = [
  // below API 1.30 a wait has no condition (not-running); below 1.25 AutoRemove is the client's
  "docker create --pull never --name pv3 busybox true >/dev/null",
  `${CURL} -o /dev/null -w '%{http_code}\\n' -XPOST 'http://x/v1.29/containers/pv3/wait?condition=bogus'`,
  // from API 1.24 a start takes no HostConfig (a body of more than `{}`'s few bytes)
  `${CURL} -XPOST -H 'content-type: application/json' -d '{"Binds":["/tmp:/tmp"]}' 'http://x/v1.24/containers/pv3/start'; ${CURL} -o /dev/null -w '%{http_code}\\n' -XPOST -H 'content-type: application/json' -d '{}' 'http://x/v1.24/containers/pv3/start'`,
  // the copy endpoint (removed in API 1.24): a 404 without a body
  `${CURL} -o /dev/null -w '%{http_code} %{size_download}\\n' -XPOST -H 'content-type: application/json' -d '{"Resource":"/etc/hostname"}' 'http://x/v1.24/containers/pv3/copy'`,
  `${CURL} -XPOST -H 'content-type: application/json' -d '{"Image":"busybox","HostConfig":{"AutoRemove":true}}' 'http://x/v1.24/containers/create?name=pv4' >/dev/null; docker inspect -f '{{.HostConfig.AutoRemove}}' pv4`,
  // below API 1.41 a create's platform is not read; below 1.42 a stop's signal is not
  `${CURL} -XPOST -H 'content-type: application/json' -d '{"Image":"busybox"}' 'http://x/v1.40/containers/create?name=pv5&platform=linux/s390x' | ${py('print(d.get("message", "created"))')}`,
  `docker run --pull never -d --name pv6 busybox sh -c 'trap "exit 7" USR1; trap "exit 9" TERM; while :; do sleep 0.1; done' >/dev/null; sleep 1; ${CURL} -XPOST 'http://x/v1.41/containers/pv6/stop?signal=USR1&t=10'; docker inspect -f '{{.State.ExitCode}}' pv6`,
  // below API 1.41 a stats' one-shot is not read (so not refused with stream)
  `docker run --pull never -d --name pv7 busybox sleep 30 >/dev/null; ${CURL} -m 5 'http://x/v1.40/containers/pv7/stats?stream=0&one-shot=1' | ${py('print(sorted(k for k in ("read", "preread", "message") if k in d))')}`,
  // below API 1.42 an exec's console size is not read
  `docker run --pull never -d -t --name pv8 busybox sleep 30 >/dev/null; id=$(${CURL} -XPOST -H 'content-type: application/json' -d '{"Cmd":["stty","size"],"Tty":true,"AttachStdout":true,"ConsoleSize":[30,100]}' 'http://x/v1.41/containers/pv8/exec' | ${py('print(d["Id"])')}); ${CURL} -XPOST -H 'content-type: application/json' -d '{"Tty":true,"ConsoleSize":[30,100]}' "http://x/v1.41/exec/$id/start" | tr -d '\\r'`,
];

const BUILD_AND_EVENTS = [
  // below API 1.30 a build sends no aux line with the image's ID
  `d=$(mktemp -d); printf 'FROM busybox\\nLABEL a=1\\n' > $d/Dockerfile; tar -C $d -cf $d/c.tar Dockerfile; ${CURL} -XPOST -H 'content-type: application/x-tar' --data-binary @$d/c.tar 'http://x/v1.29/build?t=pvb:1' | grep -c '"aux"'; ${CURL} -XPOST -H 'content-type: application/x-tar' --data-binary @$d/c.tar 'http://x/v1.30/build?t=pvb:2' | grep -c '"aux"'; rm -r $d`,
  // image events keep the older status and id (as container events status, id and from)
  `sleep 1; s=$(date +%s); docker tag busybox pve:1; sleep 1; ${CURL} "http://x/v1.41/events?since=$s&until=$(date +%s)&filters=%7B%22type%22:%5B%22image%22%5D%7D" | tail -1 | ${py('print(d["status"], d["id"] == d["Actor"]["ID"], "from" in d)')}`,
];

describe("engined answers older API versions as Docker's daemon does", function () {
  this.timeout(300_000);
  const { itAnswersAlike } = useComparedDaemons();

  itAnswersAlike("names images as clients before API 1.43 read them, and takes the older filter parameter before 1.41", IMAGE_NAMES);

  itAnswersAlike("lists each network's containers below API 1.28 only", NETWORK_LIST);

  itAnswersAlike("reads a wait's condition, AutoRemove, a create's platform, a stop's signal, one-shot and an exec's console size only from the versions that have them, and refuses a start's body and the copy endpoint from API 1.24", CONTAINER_REQUESTS);

  itAnswersAlike("sends a build's aux line from API 1.30, and image events with their older status and id", BUILD_AND_EVENTS);
});
