/**
 * The container commands of the Docker CLI against engined and Docker's own daemon (where it is
 * installed), compared line by line: what a container records of the image's volumes, `ps`'s
 * status filter, an exec in a paused container, kill's refusals, logs' `--tail`, rename's refusals,
 * the create-time checks of cpus, the stop signal, tmpfs paths, the UTS mode's hostname and capabilities,
 * ps's isolation filter, runtime refusals with Docker's hints and statuses, the end of an attachment's
 * input, real-time signals, port bindings checked at create, the init layer in diffs, logs' exact
 * bounds, a failed start's exit code and a rename's names on the networks.
 */
import "./helpers/root-hooks.js";
import { useComparedDaemons } from "./helpers/daemon-compare.js";

const VOLUMES = [
  "docker create --pull never --name v1 busybox",
  "docker inspect -f '{{json .Config.Volumes}}' v1",
  "docker create --pull never --name v2 -v /data busybox",
  "docker inspect -f '{{json .Config.Volumes}}' v2",
];

// Docker's map of mounts has no order: the lines are sorted
const MOUNT_MODES = [
  "docker create --pull never --name m1 -v mv1:/a -v mv2:/b:ro -v /c --mount type=volume,src=mv3,dst=/d --mount type=volume,dst=/e busybox >/dev/null",
  "docker inspect -f '{{range .Mounts}}{{.Destination}} {{.Mode}} {{.RW}} {{.Driver}}|{{end}}' m1 | tr '|' '\\n' | sort",
  "docker ps -a --filter name=m1 --format '{{.Mounts}}' | tr ',' '\\n' | grep -c .",
];

const CONNECT_TWICE = [
  "docker network create pc1 >/dev/null; docker network create pc2 >/dev/null",
  "docker create --pull never --name nc1 --network pc1 busybox >/dev/null",
  "docker network connect pc1 nc1; echo rc=$?",
  "docker network connect --alias a1 pc2 nc1; docker network connect --alias a2 pc2 nc1; echo rc=$?",
  "docker network connect --ip 10.99.99.99 pc2 nc1; echo rc=$?",
  // the first alias only: dockerd 20.10 (API 1.41) adds the short ID after it, Docker 28 at 1.51 does not
  "docker inspect -f '{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{if $v.Aliases}}{{index $v.Aliases 0}}{{end}};{{end}}' nc1",
  "docker rm nc1 >/dev/null; docker network rm pc1 pc2",
];

// no swap to reach past the limit: memory and memory-swap alike. Whether dockerd 20.10 notices
// the OOM kill is racy (containerd's cgroup v1 event may come after the exit, then it says false):
// OOMKilled and the oom event are engined's own test (api-docker-behaviours)
const OOM = [
  "docker run --pull never --name oom1 --memory 8m --memory-swap 8m busybox sh -c 'dd if=/dev/zero of=/dev/null bs=32M count=1'; echo rc=$?",
  "docker inspect -f '{{.State.ExitCode}} {{.State.Status}}' oom1",
  "docker run --pull never --name oom2 busybox sh -c 'exit 3'; docker inspect -f '{{.State.OOMKilled}} {{.State.ExitCode}}' oom2",
];

const TOP_ARGS = [
  "docker run --pull never -d --name tp busybox sleep 60 >/dev/null",
  "docker top tp -o bogus",
  "docker top tp -o pid,comm | head -1",
];

// the container's cgroup path under the daemon's parent (/docker or /engine) shows with the host's cgroup namespace
const CGROUPNS = [
  "docker create --pull never --name cg busybox >/dev/null; docker inspect -f '{{.HostConfig.CgroupnsMode}}' cg",
  "docker run --pull never --rm busybox sh -c 'grep -c \":/$\" /proc/self/cgroup'",
  "docker run --pull never --rm --cgroupns private busybox sh -c 'grep -c \":/$\" /proc/self/cgroup'",
];

const RUNTIME_REFUSALS = [
  "docker run --pull never --rm --device-read-bps /dev/nonexistent:1mb busybox true",
  // a sysctl runc will not set in the host's network namespace (Docker 28 adds the create's prefix; 20.10, compared here, does not)
  "docker run --pull never --rm --sysctl net.ipv4.ip_forward=1 --network host busybox true 2>&1 | sed 's/failed to create task for container: //'",
  "docker run --pull never --rm --mount type=bind,src=/tmp,dst=/t,bind-propagation=rshared busybox true",
  "docker run --pull never --rm -v /tmp:/t:rslave busybox true",
];

const NETWORK_MODE_CONFLICTS = [
  "docker run --pull never -d --name nm busybox sleep 60 >/dev/null",
  "docker create --pull never --network container:nm -p 80:80 busybox",
  "docker create --pull never --network container:nm -P busybox",
  "docker create --pull never --network container:nm --expose 80 busybox",
  "docker create --pull never --network container:nm --dns 1.1.1.1 busybox",
  "docker create --pull never --network container:nm --add-host a:1.2.3.4 busybox",
  "docker create --pull never --network container:nm --hostname x busybox",
  "docker create --pull never --network container:nm --link nm:x busybox",
  "docker create --pull never --network host --link nm:x busybox",
  // (a fixed address there: 20.10, compared here, refuses it at the start; engined at the create, as current moby's verifyNetworkingConfig)
];

const EXEC_WORDS = [
  "docker run --pull never -d --name xw busybox sleep 60 >/dev/null",
  "docker exec --detach-keys bogus xw true",
  "docker exec xw true; docker exec xw echo a b; sleep 1; docker events --since 0 --until \"$(date +%s)\" --filter event=exec_create --filter event=exec_start --format '[{{.Action}}]'",
];

/** The events' name filters: the actor's ID or name begins with the value, whatever the event's type (Docker's fuzzyMatchName). */
const EVENT_NAME_PREFIX = [
  "t=$(date +%s); docker tag busybox fzimg:1; docker volume create fzvol >/dev/null; docker create --pull never --name fz1 busybox >/dev/null; docker create --pull never --name xfz busybox >/dev/null; sleep 1; u=$(date +%s); docker events --since $t --until $u --filter container=fz --format '{{.Type}} {{.Action}} {{.Actor.Attributes.name}}'; docker events --since $t --until $u --filter volume=fz --filter network=fz --format '{{.Type}} {{.Action}}'; docker rm fz1 xfz >/dev/null; docker volume rm fzvol >/dev/null; docker rmi fzimg:1 >/dev/null",
];

const STOP_KILLS = [
  // sleep as PID 1 ignores SIGTERM: the stop's SIGKILL comes after the timeout, and is announced too
  "docker run --pull never -d --name sk busybox sleep 60 >/dev/null; docker stop -t 1 sk >/dev/null; sleep 1; docker events --since 0 --until \"$(date +%s)\" --filter container=sk --format '{{.Action}} {{.Actor.Attributes.signal}}'",
  // one that ends on the signal: one kill
  "docker run --pull never -d --name sk2 busybox sh -c 'trap \"exit 0\" TERM; while :; do sleep 0.1; done' >/dev/null; sleep 0.5; docker stop -t 5 sk2 >/dev/null; sleep 1; docker events --since 0 --until \"$(date +%s)\" --filter container=sk2 --format '{{.Action}} {{.Actor.Attributes.signal}}'",
  // a forced removal kills: no stop is announced (Docker's daemon.Kill)
  "docker run --pull never -d --name sk3 busybox sleep 60 >/dev/null; docker rm -f sk3 >/dev/null; sleep 1; docker events --since 0 --until \"$(date +%s)\" --filter container=sk3 --format '{{.Action}} {{.Actor.Attributes.signal}}'",
];

const PS_STATUS = [
  "docker create --pull never --name made busybox",
  "docker ps -a --format '{{.Names}}' --filter status=bogus",
  "docker ps -a --format '{{.Names}}' --filter status=created --filter status=nope",
  "docker ps -a --format '{{.Names}}' --filter status=created",
];

const PAUSED_EXEC = [
  "docker run --pull never -d --name ep busybox sleep 60 >/dev/null",
  "docker pause ep && docker exec ep true; docker unpause ep",
];

const KILL = [
  "docker run --pull never -d --name k1 busybox sleep 60 >/dev/null",
  "docker kill -s 999 k1",
  "docker kill -s +999 k1",
  "docker kill nope",
  "docker kill -s 999 nope",
  "docker kill -s BOGUS k1",
];

const LOGS_TAIL = [
  "docker run --pull never --name l1 busybox sh -c 'echo a; echo b'",
  // a tail that is no number is every line (the client would hang on an error after the headers)
  "timeout 20 docker logs --tail x l1",
  "timeout 20 docker logs --tail +1 l1",
  "timeout 20 docker logs --tail all l1",
];

const RENAME = [
  "docker create --pull never --name r1 busybox >/dev/null",
  "docker create --pull never --name r2 busybox >/dev/null",
  "docker rename r1 r2",
  "docker rename r1 x",
  "docker rename r1 /x",
  "docker rename r1 /r3; docker ps -a --format '{{.Names}}' --filter name=r3",
];

const CPUS = [
  // Docker 28 writes the refusal in lower case; 20.10, the daemon compared here, began it with a capital
  "docker run --pull never --rm --cpus 1000 busybox true 2>&1 | sed 's/: Range of CPUs/: range of CPUs/'",
  "docker run --pull never --rm --cpus -1 busybox true 2>&1 | sed 's/: Range of CPUs/: range of CPUs/'",
  "docker create --pull never --name cu busybox >/dev/null; docker update --cpus 1000 cu 2>&1 | sed 's/: Range of CPUs/: range of CPUs/'",
  "docker run --pull never --rm --cpus 2 busybox true",
  // the CFS period's and quota's ranges, refused at create (not by the runtime at start)
  "docker create --pull never --cpu-period 500 busybox",
  "docker create --pull never --cpu-quota 500 busybox",
];

const STOP_SIGNAL = [
  "docker run --pull never --rm --stop-signal BOGUS busybox true",
  "docker create --pull never --name ss1 --stop-signal 999 busybox >/dev/null; docker inspect -f '{{.Config.StopSignal}}' ss1",
  "docker create --pull never --name ss2 --stop-signal SIGRTMIN+3 busybox >/dev/null; docker inspect -f '{{.Config.StopSignal}}' ss2",
];

const TMPFS = [
  "docker create --pull never --tmpfs relative busybox",
  "docker create --pull never --tmpfs / busybox",
  "docker create --pull never --tmpfs //: busybox",
];

const UTS_HOST = [
  "docker run --pull never --rm --uts host busybox sh -c 'test \"$(hostname)\" = \"$(cat /proc/sys/kernel/hostname)\" && echo same'",
  "docker run --pull never --rm -h xx --uts host busybox true",
];

const CAPABILITIES = [
  "docker create --pull never --cap-add BOGUS busybox",
  "docker create --pull never --cap-drop sys_bogus busybox",
  "docker run --pull never --rm --privileged --cap-add BOGUS busybox true",
  "docker run --pull never --rm --cap-drop ALL --cap-add chown busybox sh -c 'grep CapEff /proc/self/status'",
];

/** `curl -I` (HEAD) of an API path on the daemon's socket: the status, and the length announced. */
const head = (path: string) => `curl -s -o /dev/null -I -w '%{http_code} %header{content-length}\\n' --unix-socket "\${DOCKER_HOST#unix://}" 'http://x${path}'`;

const WORKING_DIR = [
  "docker create --pull never -w relative busybox pwd",
  "docker create --pull never -w relative nosuchimage pwd",
  "docker create --pull never --name wd1 -w /a/../tmp/./x/ busybox >/dev/null; docker inspect -f '{{.Config.WorkingDir}}' wd1",
  "docker run --pull never --rm -w //tmp// busybox pwd",
];

const NAME_FILTERS = [
  "docker create --pull never --name abc1 busybox >/dev/null; docker create --pull never --name xyz2 busybox >/dev/null; echo made",
  "docker ps -a --filter 'name=^abc' --format '{{.Names}}'",
  "docker ps -a --filter 'name=^/abc' --format '{{.Names}}'",
  "docker ps -a --filter 'name=b.1' --filter 'name=z2$' --format '{{.Names}}' | sort",
  "docker ps -a --filter 'name=(?i)^ABC' --format '{{.Names}}'; docker ps -a --filter 'name=[[:digit:]]$' --format '{{.Names}}' | sort",
  "docker ps -a --filter 'name=\\Aabc1\\z' --format '{{.Names}}'; docker ps -a --filter 'name=(' --format '{{.Names}}'",
  "docker network create netabc >/dev/null; docker network create netxyz >/dev/null; docker network ls --filter 'name=^netab' --format '{{.Name}}'; docker network ls --filter 'name=t.y' --format '{{.Name}}'; docker network rm netabc netxyz >/dev/null",
  "docker volume create volabc >/dev/null; docker volume create volxyz >/dev/null; docker volume ls --filter 'name=^volab' --format '{{.Name}}'; docker volume ls --filter 'name=l.y' --format '{{.Name}}'; docker volume rm volabc volxyz >/dev/null",
];

const EXEC_EMPTY_COMMAND = [
  // (the exit status of the first: 127 from Docker 28 on, 126 in 20.10, the daemon compared here; tested in cli-exec.test.ts)
  "docker run --pull never -d --name ex3 busybox sleep 300 >/dev/null; docker exec ex3 ''; docker exec -d ex3 ''; echo rc=$?",
];

/** A bind of the data root, or of a folder above it, receives its unmounts (rslave); another mode asked for is refused. */
const DAEMON_ROOT_BINDS = [
  "root=$(docker info -f '{{.DockerRootDir}}'); docker create --pull never --name dr1 -v $root:/r busybox >/dev/null; docker create --pull never --name dr2 -v /:/host busybox >/dev/null; docker create --pull never --name dr3 -v /tmp:/t busybox >/dev/null; docker create --pull never --name dr4 --mount type=bind,src=/,dst=/r,bind-propagation=rshared busybox >/dev/null; docker inspect -f '{{.Name}} {{range .Mounts}}{{.Propagation}}{{end}}' dr1 dr2 dr3 dr4",
  "root=$(docker info -f '{{.DockerRootDir}}'); docker create --pull never --mount type=bind,src=$root,dst=/r,bind-propagation=rprivate busybox 2>&1 | sed \"s|$root|ROOT|g\"; docker create --pull never -v $root/volumes:/r:private busybox 2>&1 | sed \"s|$root|ROOT|g\"",
  "docker run --rm --pull never -v /:/host busybox sh -c 'grep \" /host \" /proc/self/mountinfo | grep -o master: | head -1'",
];

/** A copy's entry names as Docker's archive gives them: `.` for a path whose last part is `.`, slashes after it or not (moby's TestCopyFromContainer). */
const ARCHIVE_NAMES = [
  "docker run --pull never --name an busybox sh -c 'mkdir -p /d/bar/quux && echo -n hello > /d/foo && echo -n world > /d/bar/quux/baz && ln -s quux /d/bar/dirsymlink && ln -s quux/baz /d/bar/filesymlink'",
  ...["/d/./", "d/./", "/d/.", "d/bar/quux", "d/bar/quux/", "d/bar/quux/.", "d/bar/quux/./", "d/bar/dirsymlink", "d/bar/dirsymlink/", "d/bar/dirsymlink/./", "d/bar/filesymlink"].map(
    (p) => `curl -s --unix-socket \${DOCKER_HOST#unix://} 'http://x/v1.41/containers/an/archive?path=${encodeURIComponent(p)}' | tar -t | sort | tr '\\n' ' '`,
  ),
];

/** A port binding kept with both its fields, whatever the request sent of it. */
const PORT_BINDING_FIELDS = [
  `curl -s --unix-socket \${DOCKER_HOST#unix://} -H 'Content-Type: application/json' -d '{"Image":"busybox","HostConfig":{"PortBindings":{"80/tcp":[{"HostPort":"8080"}],"81/tcp":[],"82/tcp":null,"83/tcp":[{}]}}}' 'http://x/v1.41/containers/create?name=pbf' >/dev/null; docker inspect -f '{{json .HostConfig.PortBindings}}' pbf`,
];

const PIDS_LIMIT = [
  "for v in 0 -1 10; do docker create --pull never --name pl$v --pids-limit=$v busybox >/dev/null; docker inspect -f \"$v {{json .HostConfig.PidsLimit}}\" pl$v; done",
  "docker create --pull never --name pl busybox >/dev/null; docker update --pids-limit 5 pl >/dev/null; docker inspect -f '{{json .HostConfig.PidsLimit}}' pl; docker update --pids-limit -1 pl >/dev/null; docker inspect -f '{{json .HostConfig.PidsLimit}}' pl",
];

const MOUNT_ORDER = [
  "docker run --pull never --rm --mount type=volume,src=mo1,dst=/etc,volume-nocopy busybox ls /etc",
  "docker run --pull never --rm --mount type=tmpfs,dst=/etc busybox sh -c 'ls /etc; test -s /etc/hostname && echo named'",
];

/** A raw API call on the daemon's socket: the body and the status. */
const call = (method: string, path: string, body?: string) =>
  `curl -s -w ' %{http_code}\\n' --unix-socket "\${DOCKER_HOST#unix://}" -X ${method}${body === undefined ? "" : ` -H 'Content-Type: application/json' -d '${body}'`} 'http://x${path}'`;

const NO_CONTAINER_NAMED = [
  call("POST", "/v1.41/networks/bridge/connect", "{}"),
  call("POST", "/v1.41/networks/nosuch/disconnect", "{}"),
  call("POST", "/v1.41/commit"),
  call("POST", "/v1.41/containers/create", "{}"),
  call("POST", "/v1.41/containers/create", '{"HostConfig":{}}'),
];

/** busybox here has no Env of its own (imported): with no -e the record's is null, as Docker's merge leaves it. */
const ENV_RECORDED = [
  "docker create --pull never --name er1 busybox >/dev/null; docker inspect -f '{{json .Config.Env}}' er1",
  "docker create --pull never --name er2 -e A=1 busybox >/dev/null; docker inspect -f '{{json .Config.Env}}' er2",
];

/** A create's body with few fields (Ansible's docker_container sends no Tty): inspect lists every field of Docker's struct. */
const CONFIG_FIELDS = [
  call("POST", "/v1.41/containers/create?name=cf1", '{"Image":"busybox","Cmd":["true"],"AttachStdout":true}') +
    " >/dev/null; docker inspect -f '{{range $k, $v := .Config}}{{$k}}={{if ne $k \"Hostname\"}}{{json $v}}{{end}} {{end}}' cf1",
  "docker create --pull never --name cf2 -p 80 --stop-timeout 0 busybox >/dev/null; docker inspect -f '{{range $k, $v := .Config}}{{$k}} {{end}}{{json .Config.ExposedPorts}} {{.Config.StopTimeout}}' cf2",
];

/** An update that conflicts with the container's limits is a Conflict (Docker's conflictingUpdateOptions). */
const UPDATE_CONFLICTS = [
  "docker create --pull never --name uc1 -m 32m busybox >/dev/null; " + call("POST", "/v1.41/containers/uc1/update", '{"Memory":67108864}'),
  "docker create --pull never --name uc2 --cpus 0.5 busybox >/dev/null; " + call("POST", "/v1.41/containers/uc2/update", '{"CpuQuota":20000}'),
  "docker create --pull never --name uc3 --rm busybox >/dev/null; " + call("POST", "/v1.41/containers/uc3/update", '{"RestartPolicy":{"Name":"always"}}'),
];

/** ExecIDs: the container's execs that have not exited (created or running), null when none. */
const EXEC_IDS = [
  "docker run -d --pull never --name ei1 busybox sleep 60 >/dev/null; " + call("POST", "/v1.41/containers/ei1/exec", '{"Cmd":["true"]}') +
    " >/dev/null; docker exec ei1 true; docker inspect -f '{{len .ExecIDs}}' ei1",
  "docker run -d --pull never --name ei2 busybox sleep 60 >/dev/null; docker exec ei2 true; docker inspect -f '{{json .ExecIDs}}' ei2",
];

/** Config.NetworkDisabled: the loopback alone, no network, the image's hosts and resolv.conf, nothing published. */
const NETWORK_DISABLED = [
  call("POST", "/v1.41/containers/create?name=nd1", '{"Image":"busybox","Cmd":["sh","-c","ip -o link | cut -d: -f2; ls /etc; mount | grep -c /etc/"],"NetworkDisabled":true,"HostConfig":{"PortBindings":{"80/tcp":[{"HostPort":"18099"}]}}}') +
    " >/dev/null; docker start -a nd1; docker inspect -f '{{json .NetworkSettings.Networks}} {{.HostsPath}}|{{.ResolvConfPath}}|{{json .NetworkSettings.Ports}}' nd1",
];

/** --domainname: the container's NIS domain name (Docker sets the kernel.domainname sysctl), and its /etc/hosts. */
const DOMAINNAME = [
  "docker run --rm --pull never --hostname h1 --domainname example.org busybox sh -c 'hostname; hostname -d; cat /proc/sys/kernel/domainname; grep -c h1.example.org /etc/hosts'",
  "docker run --rm --pull never --domainname example.org --sysctl kernel.domainname=other.org busybox cat /proc/sys/kernel/domainname",
];

/** An attachment to a paused container: Docker's 409, the container named as the client named it. */
const ATTACH_PAUSED = [
  "docker run -d --pull never --name ap1 busybox sleep 60 >/dev/null; docker pause ap1 >/dev/null; " +
    call("POST", "/v1.41/containers/ap1/attach?stream=1&stdout=1") + "; docker unpause ap1 >/dev/null",
  // refused on the connection taken over, raw (the keys read before the container is looked for)
  "curl -s -i --unix-socket \"${DOCKER_HOST#unix://}\" -X POST 'http://x/v1.41/containers/nosuch/attach?stream=1' | tr -d '\\r'",
  "curl -s -i --unix-socket \"${DOCKER_HOST#unix://}\" -X POST 'http://x/v1.41/containers/nosuch/attach?stream=1&detachKeys=bogus-key' | tr -d '\\r'",
];

/** In a network namespace of its own, ping and low ports for every user, as Docker's daemon sets the two sysctls. */
const UNPRIVILEGED_NET = [
  "docker run --rm --pull never -u 1000:1000 busybox sh -c 'cat /proc/sys/net/ipv4/ping_group_range /proc/sys/net/ipv4/ip_unprivileged_port_start'",
  "docker run --rm --pull never --cap-drop NET_BIND_SERVICE busybox cat /proc/sys/net/ipv4/ip_unprivileged_port_start",
  "docker run --rm --pull never --sysctl net.ipv4.ip_unprivileged_port_start=80 busybox cat /proc/sys/net/ipv4/ip_unprivileged_port_start",
  "docker run --rm --pull never --network host busybox sh -c 'cat /proc/sys/net/ipv4/ping_group_range /proc/sys/net/ipv4/ip_unprivileged_port_start'",
];

/** A /dev of the container's own: nothing of the daemon's mounted under it (moby's TestMountDevBind). */
const DEV_BIND = [
  "docker run --rm --pull never -v /dev:/dev busybox sh -c 'mount | grep \" /dev\" | cut -d\" \" -f1-5'",
  "docker run --rm --pull never --tmpfs /dev:dev,exec busybox sh -c 'mount | grep \" /dev\" | cut -d\" \" -f1-5'",
];

/** What a connect refuses of a container on the host's, none or another container's network, in Docker's words (moby TestContainerWithConflicting*Network). */
const CONNECT_MODE_CONFLICTS = [
  "docker network create cm1 >/dev/null; docker create --pull never --name cm-on --net cm1 busybox >/dev/null; docker network connect host cm-on; docker network connect none cm-on",
  "docker create --pull never --name cm-host --net host busybox >/dev/null; docker network connect cm1 cm-host; docker network connect host cm-host; echo rc=$?",
  "docker create --pull never --name cm-none --net none busybox >/dev/null; docker network connect cm1 cm-none; docker network connect none cm-none; echo rc=$?",
  "docker run -d --pull never --name cm-a busybox top >/dev/null; docker run -d --pull never --net container:cm-a --name cm-b busybox top >/dev/null; docker network connect cm1 cm-b",
  // the none rule is about the networks the container is on now: off every other, it may join none; off none, another
  "docker create --pull never --name cm-off --net cm1 busybox >/dev/null; docker network disconnect cm1 cm-off; docker network connect none cm-off; echo rc=$?; docker network connect cm1 cm-off; docker inspect -f '{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}' cm-off",
  "docker network disconnect none cm-none; echo rc=$?; docker network connect cm1 cm-none; echo rc=$?; docker network connect none cm-none; docker inspect -f '{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}' cm-none; docker inspect -f '{{.HostConfig.NetworkMode}}' cm-none",
  "docker run -d --pull never --name cm-run --net none busybox top >/dev/null; docker network disconnect none cm-run; echo rc=$?; docker inspect -f '{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}' cm-run",
  "docker run -d --pull never --name cm-run2 --net cm1 busybox top >/dev/null; docker network disconnect cm1 cm-run2; docker network connect none cm-run2; echo rc=$?; docker inspect -f '{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}' cm-run2; docker exec cm-run2 ip -o link | cut -d: -f2 | sed 's/@.*//'",
  // started again on the networks it is on now: none alone (the loopback), or another
  "docker stop -t 0 cm-run2 >/dev/null; docker start cm-run2 >/dev/null; docker exec cm-run2 ip -o link | cut -d: -f2 | sed 's/@.*//'; docker start cm-none >/dev/null; docker exec cm-none ip -o link | cut -d: -f2 | sed 's/@.*//'",
  "docker rm -f cm-on cm-host cm-none cm-a cm-b cm-off cm-run cm-run2 >/dev/null; docker network rm cm1",
];

/** `ps`'s `isolation` filter (every Linux container has the default one) and a bad port filter named whole (moby daemon/list.go). */
const PS_FILTER_KEYS = [
  "docker create --pull never --name pf1 busybox >/dev/null; docker ps -a --filter isolation=default --filter name=pf1 --format '{{.Names}}'",
  "docker ps -a --filter isolation=hyperv --filter name=pf1 --format '{{.Names}}'",
  "docker ps -a --filter publish=bogus/udp; docker ps -a --filter expose=1-x",
];

/** A directory mounted onto a file: the runtime's words and Docker's hint, the request's fault (400) and 127 (TestExecWithPrivileged's neighbours, a run's bind). */
const MOUNT_TYPE_HINT = [
  "docker create --pull never --name mth -v /tmp:/etc/passwd busybox true >/dev/null; " + call("POST", "/v1.41/containers/mth/start") +
    " | sed 's/failed to create task for container: //'; docker inspect -f '{{.State.ExitCode}} {{.State.Status}}' mth",
  "docker run -d --pull never --name mth2 busybox top >/dev/null; docker exec -w /etc/passwd mth2 pwd; echo rc=$?",
];

/** The end of an attachment's input ends its output, unless the container's stdin closes with it (StdinOnce): TestAttachDisconnect's attach. */
const ATTACH_INPUT_END = [
  // (the answer comes a second after the input ended: Docker's attachment has no output left by then)
  "docker run -di --pull never --name ie1 busybox sh -c 'read x; sleep 1; echo got $x; sleep 60' >/dev/null; (echo hello | timeout -s KILL 5 docker attach ie1; echo rc=$?) 2>&1 | grep -v -e Killed -e Done; docker logs ie1; docker inspect -f '{{.State.Running}}' ie1",
  "echo hello | docker run -i --pull never --name ie2 busybox cat; echo rc=$?",
];

/** Real-time signals by name (TestKillWithInvalidSignal's neighbours): a kill's, and a stop signal's, given to the runtime as numbers. */
const REALTIME_SIGNALS = [
  "docker run -d --pull never --name krt busybox top >/dev/null; docker kill -s RTMIN+1 krt; docker kill -s SIGRTMAX krt; docker kill -s rtmax-2 krt; sleep 0.3; docker inspect -f '{{.State.Running}}' krt",
  "docker run -d --pull never --name krt2 --stop-signal SIGRTMIN+3 busybox sh -c 'trap \"echo got; exit 0\" 37; while :; do sleep 0.1; done' >/dev/null; sleep 0.5; docker stop -t 5 krt2; docker logs krt2; sleep 1; docker events --since 0 --until \"$(date +%s)\" --filter container=krt2 --filter event=kill --format '{{.Action}} {{.Actor.Attributes.signal}}'",
];

/** A port binding that is no port, refused at create (moby's TestContainerAPIBadPort, TestContainerAPIInvalidPortSyntax). */
const PORT_SPEC_CHECKS = [
  call("POST", "/v1.41/containers/create", '{"Image":"busybox","HostConfig":{"PortBindings":{"8080/tcp":[{"HostIp":"","HostPort":"aa80"}]}}}'),
  call("POST", "/v1.41/containers/create", '{"Image":"busybox","HostConfig":{"NetworkMode":"default","PortBindings":{"19039;1230":[{}]}}}'),
  call("POST", "/v1.41/containers/create", '{"Image":"busybox","HostConfig":{"PortBindings":{"80/tcp":[{"HostPort":"9090-9089"}]}}}'),
  call("POST", "/v1.41/containers/create", '{"Image":"busybox","HostConfig":{"PortBindings":{"70000/udp":[]}}}'),
  call("POST", "/v1.41/containers/create?name=psc", '{"Image":"busybox","HostConfig":{"PortBindings":{"80/tcp":[{"HostPort":"9090-9092"},{"HostPort":"8080/udp"},{"HostPort":""}]}}}'),
];

/** What a container did to the files of Docker's init layer shows in its diff (moby's TestDiffEnsureDockerinitFilesAreIgnored leaves them out unchanged). */
const DIFF_INIT_LAYER = [
  "docker run --pull never --name dfi1 busybox sh -c 'rm /.dockerenv /etc/mtab'; docker diff dfi1",
  "docker run --pull never --name dfi2 busybox sh -c 'echo x > /.dockerenv; ln -sf /nowhere /etc/mtab'; docker diff dfi2",
  "docker create --pull never --name dfi3 -w /newdir busybox true >/dev/null; docker diff dfi3; docker start -a dfi3; docker diff dfi3",
  // the init layer is made once: what a run removed of it is not back at the next start
  "docker run --pull never --name dfi4 busybox sh -c 'if [ -e /.dockerenv ]; then rm /.dockerenv /etc/mtab; echo removed; else ls -la /.dockerenv /etc/mtab; fi'; docker start -a dfi4; docker diff dfi4",
];

/** An exec whose command is missing or is a directory is the request's fault (moby's TestExecAPIStartInvalidCommand). */
const EXEC_START_REFUSALS = [
  "docker run -d --pull never --name esr busybox top >/dev/null; for cmd in invalid /etc /nowhere; do id=$(" + call("POST", "/v1.41/containers/esr/exec", '{"Cmd":["\'$cmd\'"]}') +
    " | sed -n 's/.*\"Id\":\"\\([0-9a-f]*\\)\".*/\\1/p'); " + call("POST", "/v1.41/exec/'$id'/start", '{"Detach":true}') + "; done",
];

/** `--until` the time of a line takes that line: the bound is kept to the nanosecond (moby's TestLogsAPIUntil), with either driver. */
const LOGS_UNTIL = [
  ...["json-file", "local"].map((driver) =>
    `docker run --pull never --name lu-${driver} --log-driver ${driver} busybox sh -c 'for i in 1 2 3; do echo log$i; sleep 0.3; done' >/dev/null; ` +
      `t=$(docker logs -t lu-${driver} | sed -n 2p | cut -d' ' -f1); docker logs --until $t lu-${driver}; docker logs --since $t lu-${driver}`,
  ),
];

/** A start that failed for the daemon's part (a port in use) records the exit code 128 (moby's TestStartRecordError). */
const START_FAILURE_EXIT_CODE = [
  "docker network create pe >/dev/null; docker run -d --pull never --net pe -p 9999:9999 --name pe1 busybox top >/dev/null; " +
    "docker run -d --pull never --net pe --name pe2 -p 9999:9999 busybox top >/dev/null 2>&1; echo rc=$?; docker inspect -f '{{.State.Status}} {{.State.ExitCode}} {{if .State.Error}}error{{end}}' pe2; " +
    "docker stop pe1 >/dev/null; docker start pe2 >/dev/null; docker inspect -f '{{.State.Status}} [{{.State.Error}}]' pe2; docker rm -f pe1 pe2 >/dev/null; docker network rm pe >/dev/null",
];

/** A running container renamed is found by its new name on its networks, and no longer by the old one (moby's TestRenameAnonymousContainer, renamed running). */
const RENAME_DNS = [
  "docker network create rdn >/dev/null; docker run -d --pull never --name rd1 --net rdn --network-alias al busybox top >/dev/null; docker rename rd1 rd2; " +
    "docker run --rm --pull never --net rdn busybox sh -c 'nslookup rd2 >/dev/null 2>&1 && echo new-found; nslookup rd1 >/dev/null 2>&1 && echo old-found; nslookup al >/dev/null 2>&1 && echo alias-found'; " +
    "docker rm -f rd2 >/dev/null; docker network rm rdn >/dev/null",
];

const HEAD_ROUTES = [
  head("/_ping"),
  head("/containers/json"),
  head("/v1.41/info"),
  head("/images/json"),
  "docker create --pull never --name hd1 busybox >/dev/null && " + head("/containers/hd1/archive?path=/etc/passwd") + " && " + head("/containers/hd1/archive?path=/nothing"),
];

describe("engined answers the container commands as Docker's daemon does", function () {
  this.timeout(300_000);
  const { itAnswersAlike } = useComparedDaemons();

  itAnswersAlike("records the image's volumes as Docker merges them: null when neither the image nor the request has any", VOLUMES);

  itAnswersAlike("records the mode `z` for the local volumes a request names without a mode, none for the image's", MOUNT_MODES);

  itAnswersAlike("takes a second connect of a container that does not run as done, keeping the first settings", CONNECT_TWICE);

  itAnswersAlike("records and announces a run the OOM killer ended", OOM);

  itAnswersAlike("says what ps said of bad arguments in its first line", TOP_ARGS);

  itAnswersAlike("gives containers the host's cgroup namespace by default on a cgroup v1 host, as Docker's daemon does", CGROUPNS);

  itAnswersAlike("fails a start the runtime or the mount table refuses in Docker's words", RUNTIME_REFUSALS);

  itAnswersAlike("refuses at create what a container on another's or the host's network cannot ask for", NETWORK_MODE_CONFLICTS);

  itAnswersAlike("names an exec's bad detach keys and its events as Docker's daemon does", EXEC_WORDS);

  itAnswersAlike("announces a stop's SIGKILL after its timeout, and a forced removal's kill without a stop, as Docker's daemon does", STOP_KILLS);

  itAnswersAlike("refuses a status filter that names no state", PS_STATUS);

  itAnswersAlike("names a paused container as the client did when refusing an exec in it", PAUSED_EXEC);

  itAnswersAlike("says a kill failed for a missing container or a number that is no signal", KILL);

  itAnswersAlike("reads a tail that is no number as every line", LOGS_TAIL);

  itAnswersAlike("says a rename's refusal came from allocating the new name, with its slash", RENAME);
  itAnswersAlike("refuses more cpus than the daemon may run on, at create and update", CPUS);

  itAnswersAlike("refuses a stop signal that is no signal at create", STOP_SIGNAL);

  itAnswersAlike("refuses a tmpfs at / or at a relative path at create", TMPFS);

  itAnswersAlike("runs a container in the host's UTS namespace without a name of its own, and refuses one asked for", UTS_HOST);

  itAnswersAlike("refuses an unknown capability at create, saying which list had it", CAPABILITIES);

  itAnswersAlike("refuses a relative working directory before looking for the image, and keeps an absolute one cleaned", WORKING_DIR);

  itAnswersAlike("matches a name filter as Docker's filters.Match does: equal, or a Go regular expression found in the name", NAME_FILTERS);

  itAnswersAlike("takes an exec whose command is an empty word, which the runtime then refuses", EXEC_EMPTY_COMMAND);

  itAnswersAlike("records no pids limit for 0 or a negative one at create, and 0 for them at update", PIDS_LIMIT);

  itAnswersAlike("keeps each port binding with both its fields, as Go's struct", PORT_BINDING_FIELDS);

  itAnswersAlike("names a copy's entries as Docker's archive does", ARCHIVE_NAMES);

  itAnswersAlike("makes a bind of or above the data root receive its unmounts, and refuses another propagation there", DAEMON_ROOT_BINDS);

  itAnswersAlike("mounts the network's files over a volume or a tmpfs at /etc, not under it", MOUNT_ORDER);

  itAnswersAlike("says no container was named, and no container settings given, in Docker's words", NO_CONTAINER_NAMED);

  itAnswersAlike("records the image's environment as it is when the request has none", ENV_RECORDED);

  itAnswersAlike("lists every field of a container's config, those a create left out at their empty values", CONFIG_FIELDS);

  itAnswersAlike("answers an update that conflicts with the container's limits with a 409", UPDATE_CONFLICTS);

  itAnswersAlike("lists the execs of a container that have not exited", EXEC_IDS);

  itAnswersAlike("runs a container whose network is disabled on its loopback alone", NETWORK_DISABLED);

  itAnswersAlike("gives a container the NIS domain name asked for", DOMAINNAME);

  itAnswersAlike("refuses to attach to a paused container, and refuses an attachment raw on the connection", ATTACH_PAUSED);

  itAnswersAlike("lets every user ping and bind low ports in a container's own network namespace", UNPRIVILEGED_NET);

  itAnswersAlike("mounts nothing of its own under a /dev the container brings", DEV_BIND);

  itAnswersAlike("refuses to connect a container on the host's, none or another container's network elsewhere, in Docker's words, none beside the networks it is on now", CONNECT_MODE_CONFLICTS);

  itAnswersAlike("takes ps's isolation filter, and names a bad port filter whole", PS_FILTER_KEYS);

  itAnswersAlike("adds Docker's hint to a start or an exec the runtime refused with 'not a directory'", MOUNT_TYPE_HINT);

  itAnswersAlike("ends an attachment's output with its input, unless the container's stdin closes with it", ATTACH_INPUT_END);

  itAnswersAlike("sends real-time signals named RTMIN+n or RTMAX-n, by kill and by stop", REALTIME_SIGNALS);

  itAnswersAlike("refuses a port binding that is no port at create, in Docker's words", PORT_SPEC_CHECKS);

  itAnswersAlike("lists the files of Docker's init layer a container removed or changed in its diff", DIFF_INIT_LAYER);

  itAnswersAlike("answers an exec the runtime could not run for its command with a 400", EXEC_START_REFUSALS);

  itAnswersAlike("reads logs until and since the time of a line with that line", LOGS_UNTIL);

  itAnswersAlike("records the exit code 128 for a start that failed for the daemon's part", START_FAILURE_EXIT_CODE);

  itAnswersAlike("gives a running container's new name to its networks' name service", RENAME_DNS);

  itAnswersAlike("serves HEAD on the ping and a container's archive only, as Docker's router declares them", HEAD_ROUTES);

  itAnswersAlike("selects events by a prefix of the actor's ID or name, whatever their type", EVENT_NAME_PREFIX);
});
