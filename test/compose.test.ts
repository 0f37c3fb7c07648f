/**
 * Debian's docker-compose (1.29, which drives the daemon through the Python SDK) brings real
 * projects up and down against engined, as a new user would (issue 25): a daemon with its bridge
 * in a network namespace of its own, the busybox image imported first (compose 1.29 pulls an
 * image it does not find, and there is no registry here), and two projects written as YAML files
 * in a temporary folder. The first is the issue's: two services, a network, a named volume, a
 * health check, and a service that waits for the other to be healthy. The second uses every
 * `depends_on` condition (service_started, service_healthy, service_completed_successfully),
 * network aliases, a named volume two services share, `env_file` and `restart: on-failure`.
 * Each comes up with `up -d`, is checked with `docker-compose ps`, `docker inspect`, the daemon's
 * events and commands run in the containers, and goes with `down -v`, leaving no container,
 * network, bridge or volume behind. Every wait is bounded (compose's own by its process timeout).
 */
import "./helpers/root-hooks.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, runCommand, type RunResult } from "./helpers/engined.js";
import { eventually, startNetDaemon, type NetDaemon } from "./helpers/net-daemon.js";

interface Inspected {
  Name: string;
  Created: string;
  RestartCount: number;
  State: { Status: string; Running: boolean; ExitCode: number; StartedAt: string; FinishedAt: string; Health?: { Status: string } };
  HostConfig: { RestartPolicy: { Name: string; MaximumRetryCount: number } };
  Config: { Env: string[]; Labels: Record<string, string> };
  NetworkSettings: { Networks: Record<string, { Aliases: string[] | null; IPAddress: string }> };
}

interface DaemonEvent {
  Action: string;
  Actor: { Attributes: Record<string, string> };
  timeNano: number;
}

/** The project: web serves a page from a named volume; client waits for web to be healthy. */
const PROJECT_1 = `version: "3.8"
services:
  web:
    image: busybox
    command: ["sh", "-c", "echo hello from web > /data/index.html; exec httpd -f -p 80 -h /data"]
    volumes:
      - webdata:/data
    networks:
      - back
    healthcheck:
      test: ["CMD", "wget", "-q", "-O", "/dev/null", "http://127.0.0.1/index.html"]
      interval: 1s
      timeout: 2s
      retries: 20
    stop_grace_period: 2s
  client:
    image: busybox
    command: ["sh", "-c", "wget -q -O /tmp/got http://web/index.html; trap 'exit 0' TERM; while :; do sleep 1; done"]
    networks:
      - back
    depends_on:
      web:
        condition: service_healthy
networks:
  back: {}
volumes:
  webdata: {}
`;

/**
 * init prepares the shared volume and exits 0; db serves what init wrote, once init has
 * completed, under the alias `database`; cache runs under the alias `kv`; app starts once db
 * is healthy and cache started, fails once (exit 3) and is restarted by its on-failure policy.
 */
const PROJECT_2 = `services:
  init:
    image: busybox
    command: ["sh", "-c", "echo prepared by init > /shared/ready"]
    volumes:
      - shared:/shared
  db:
    image: busybox
    command: ["sh", "-c", "mkdir -p /www && cp /shared/ready /www/state && exec httpd -f -p 8080 -h /www"]
    volumes:
      - shared:/shared
    networks:
      backend:
        aliases:
          - database
    healthcheck:
      test: ["CMD-SHELL", "wget -q -O /dev/null http://127.0.0.1:8080/state"]
      interval: 1s
      timeout: 2s
      retries: 20
    stop_grace_period: 2s
    depends_on:
      init:
        condition: service_completed_successfully
  cache:
    image: busybox
    command: ["sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1; done"]
    networks:
      backend:
        aliases:
          - kv
  app:
    image: busybox
    command: ["sh", "-c", "if [ ! -e /shared/crashed ]; then touch /shared/crashed; exit 3; fi; trap 'exit 0' TERM; while :; do sleep 1; done"]
    env_file: app.env
    restart: on-failure
    volumes:
      - shared:/shared
    networks:
      - backend
    depends_on:
      db:
        condition: service_healthy
      cache:
        condition: service_started
networks:
  backend: {}
volumes:
  shared: {}
`;

describe("docker-compose 1.29 (Debian's) brings projects up and down", function () {
  this.timeout(300_000);
  let n: NetDaemon;
  let dir: string;
  let config: string;

  const compose = (project: string, file: string, ...args: string[]): Promise<RunResult> =>
    runCommand("docker-compose", ["-p", project, "-f", join(dir, file), ...args], {
      cwd: dir,
      // compose 1.29 takes the daemon from DOCKER_HOST; nothing of the machine's own set-up leaks in
      env: { DOCKER_HOST: n.host, DOCKER_CONFIG: config, DOCKER_CONTEXT: undefined, DOCKER_TLS_VERIFY: undefined, DOCKER_CERT_PATH: undefined, COMPOSE_FILE: undefined, COMPOSE_PROJECT_NAME: undefined },
      timeoutMs: 120_000,
    });
  const composeOk = async (project: string, file: string, ...args: string[]): Promise<string> => {
    const r = await compose(project, file, ...args);
    expect(r.code, `docker-compose ${args.join(" ")}: ${r.stdout}${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  const inspect = async (name: string): Promise<Inspected> => JSON.parse(await n.cli("inspect", name))[0];
  const exec = (name: string, script: string) => n.cli("exec", name, "sh", "-c", script);
  /** The container events of the daemon between `since` and now. */
  const eventsSince = async (since: number): Promise<DaemonEvent[]> => {
    const r = await docker(n.host, ["events", "--since", String(since), "--until", String(Math.ceil(Date.now() / 1000) + 1), "--filter", "type=container", "--format", "{{json .}}"]);
    expect(r.code, r.stderr).to.equal(0);
    return r.stdout.split("\n").filter(Boolean).map((line) => JSON.parse(line) as DaemonEvent);
  };
  const when = (events: DaemonEvent[], name: string, action: string): number => {
    const found = events.find((e) => e.Actor.Attributes.name === name && e.Action === action);
    expect(found, `${action} of ${name}`).to.not.equal(undefined);
    return found!.timeNano;
  };
  /** After `down -v`: none of the project's containers, networks, bridges or volumes is left. */
  const expectGone = async (project: string, networks: string[], volumes: string[]) => {
    expect(await n.cli("ps", "-aq", "--filter", `label=com.docker.compose.project=${project}`)).to.equal("");
    for (const name of networks) expect((await docker(n.host, ["network", "inspect", name])).code, `network ${name}`).to.equal(1);
    for (const name of volumes) expect((await docker(n.host, ["volume", "inspect", name])).code, `volume ${name}`).to.equal(1);
    expect(await n.cli("network", "ls", "-q", "--filter", `label=com.docker.compose.project=${project}`)).to.equal("");
    expect(await n.cli("volume", "ls", "-q", "--filter", `label=com.docker.compose.project=${project}`)).to.equal("");
    // only loopback and the default bridge are left in the daemon's namespace
    const links = n.ns.run("ip", "-o", "link", "show").split("\n").filter(Boolean).map((line) => line.split(": ")[1].split("@")[0]);
    expect(links.sort()).to.deep.equal(["engine0", "lo"]);
  };

  before(async function () {
    n = await startNetDaemon(); // busybox is imported there: nothing needs pulling
    dir = makeTempDir("engine-compose-");
    config = makeTempDir("engine-compose-config-");
    writeFileSync(join(dir, "project1.yml"), PROJECT_1);
    writeFileSync(join(dir, "project2.yml"), PROJECT_2);
    writeFileSync(join(dir, "app.env"), "# read by compose, not by the daemon\nGREETING=hello from env_file\nSECOND=two words\n");
  });
  after(async function () {
    await n?.stop(); // what a failed test left goes with the daemon and its namespace
  });

  it("the issue's project: a network, a named volume, and a service that waits for the other's health check", async function () {
    const up = await compose("p1", "project1.yml", "up", "-d");
    expect(up.code, up.stdout + up.stderr).to.equal(0);
    expect(up.stderr).to.include('Creating network "p1_back"');
    expect(up.stderr).to.include('Creating volume "p1_webdata"');
    expect(up.stderr).to.not.match(/Pulling/);

    const ps = await composeOk("p1", "project1.yml", "ps");
    expect(ps).to.match(/^p1_web_1 .* Up \(healthy\) *$/m);
    expect(ps).to.match(/^p1_client_1 .* Up *$/m);
    const web = await inspect("p1_web_1");
    expect(web.State.Health?.Status).to.equal("healthy");
    expect(web.Config.Labels).to.include({ "com.docker.compose.project": "p1", "com.docker.compose.service": "web", "com.docker.compose.container-number": "1" });
    expect(Object.keys(web.NetworkSettings.Networks)).to.deep.equal(["p1_back"]);
    expect((await inspect("p1_client_1")).State.Running).to.equal(true);
    // client reached web by its service name on the project's network, once web was healthy
    await eventually("client fetched the page", async () => (await docker(n.host, ["exec", "p1_client_1", "test", "-s", "/tmp/got"])).code === 0, 20_000);
    expect(await exec("p1_client_1", "cat /tmp/got")).to.equal("hello from web\n");
    expect(JSON.parse(await n.cli("volume", "inspect", "p1_webdata"))[0].Labels).to.include({ "com.docker.compose.project": "p1", "com.docker.compose.volume": "webdata" });

    const down = await compose("p1", "project1.yml", "down", "-v");
    expect(down.code, down.stdout + down.stderr).to.equal(0);
    expect(down.stderr).to.include("Removing network p1_back");
    expect(down.stderr).to.include("Removing volume p1_webdata");
    await expectGone("p1", ["p1_back"], ["p1_webdata"]);
  });

  it("depends_on conditions, network aliases, a shared named volume, env_file and restart: on-failure", async function () {
    const since = Math.floor(Date.now() / 1000) - 1;
    const up = await compose("p2", "project2.yml", "up", "-d");
    expect(up.code, up.stdout + up.stderr).to.equal(0);

    // app fails once and its policy starts it again: wait (bounded) until it runs for good
    await eventually("app restarted by its policy", async () => {
      const app = await inspect("p2_app_1");
      return app.State.Running && app.RestartCount === 1;
    }, 30_000);
    const ps = await composeOk("p2", "project2.yml", "ps");
    expect(ps).to.match(/^p2_init_1 .* Exit 0 *$/m);
    expect(ps).to.match(/^p2_db_1 .* Up \(healthy\) *$/m);
    expect(ps).to.match(/^p2_cache_1 .* Up *$/m);
    expect(ps).to.match(/^p2_app_1 .* Up *$/m);

    const [init, db, app] = await Promise.all(["p2_init_1", "p2_db_1", "p2_app_1"].map(inspect));
    expect(init.State).to.include({ Status: "exited", ExitCode: 0 });
    expect(db.State.Health?.Status).to.equal("healthy");
    expect(app.HostConfig.RestartPolicy).to.deep.equal({ Name: "on-failure", MaximumRetryCount: 0 });
    expect(db.NetworkSettings.Networks.p2_backend.Aliases).to.include.members(["database", "db"]);

    // each condition held before its dependant was created, in the daemon's own order of events
    const events = await eventsSince(since);
    expect(events.find((e) => e.Actor.Attributes.name === "p2_init_1" && e.Action === "die")?.Actor.Attributes.exitCode).to.equal("0");
    expect(when(events, "p2_db_1", "create")).to.be.greaterThan(when(events, "p2_init_1", "die"));
    expect(when(events, "p2_app_1", "create")).to.be.greaterThan(when(events, "p2_db_1", "health_status: healthy"));
    expect(when(events, "p2_app_1", "create")).to.be.greaterThan(when(events, "p2_cache_1", "start"));
    const appDies = events.filter((e) => e.Actor.Attributes.name === "p2_app_1" && e.Action === "die");
    expect(appDies.map((e) => e.Actor.Attributes.exitCode)).to.deep.equal(["3"]);

    // env_file's variables, the volume init filled, and the other services by their aliases
    expect(await exec("p2_app_1", 'echo "$GREETING|$SECOND"')).to.equal("hello from env_file|two words\n");
    expect(await exec("p2_app_1", "cat /shared/ready")).to.equal("prepared by init\n");
    expect(await exec("p2_app_1", "nslookup database")).to.include(`Address: ${ipOf(db, "p2_backend")}`);
    expect(await exec("p2_app_1", "wget -q -O - http://database:8080/state")).to.equal("prepared by init\n");
    expect(await exec("p2_app_1", "ping -c1 -W2 kv")).to.include(`bytes from ${ipOf(await inspect("p2_cache_1"), "p2_backend")}`);

    const down = await compose("p2", "project2.yml", "down", "-v");
    expect(down.code, down.stdout + down.stderr).to.equal(0);
    await expectGone("p2", ["p2_backend", "p2_default"], ["p2_shared"]);
  });

  it("recreates a service whose configuration changed (compose reads the image's ContainerConfig to carry its volumes over)", async function () {
    const file = (value: string) => `services:\n  web:\n    image: busybox\n    command: sleep 300\n    stop_signal: SIGKILL\n    network_mode: none\n    volumes: ["/data"]\n    environment:\n      V: "${value}"\n`;
    writeFileSync(join(dir, "project3.yml"), file("one"));
    await composeOk("p3", "project3.yml", "up", "-d");
    await exec("p3_web_1", "echo kept > /data/mark");
    writeFileSync(join(dir, "project3.yml"), file("two"));
    const again = await compose("p3", "project3.yml", "up", "-d");
    expect(again.code, again.stdout + again.stderr).to.equal(0);
    expect(again.stderr).to.include("Recreating");
    expect(await exec("p3_web_1", 'echo "$V"; cat /data/mark')).to.equal("two\nkept\n");
    await composeOk("p3", "project3.yml", "down", "-v");
    expect(await n.cli("ps", "-aq", "--filter", "label=com.docker.compose.project=p3")).to.equal("");
  });

  it("what compose 1.29 sends as the Python SDK makes it: nulls in Mounts, an option the driver does not know, IPAM options, link-local addresses", async function () {
    // long-syntax mounts come as docker-py's Mount, every key given (Source and ReadOnly null for a tmpfs);
    // the network has an option the bridge driver does not read, which Docker keeps and ignores
    writeFileSync(join(dir, "project4.yml"), `version: "2.4"
services:
  web:
    image: busybox
    command: sleep 300
    stop_signal: SIGKILL
    volumes:
      - type: tmpfs
        target: /scratch
      - type: volume
        target: /data
    networks:
      front:
        ipv4_address: 172.28.5.10
        link_local_ips: ["169.254.8.8"]
networks:
  front:
    driver: bridge
    driver_opts:
      example.not-a-bridge-option: "kept"
    ipam:
      driver: default
      options:
        example.ipam-option: "9-29-045"
      config:
        - subnet: 172.28.0.0/16
          ip_range: 172.28.5.0/24
          gateway: 172.28.5.254
`);
    await composeOk("p4", "project4.yml", "up", "-d");
    const net = JSON.parse(await n.cli("network", "inspect", "p4_front"))[0];
    expect(net.Options).to.deep.equal({ "example.not-a-bridge-option": "kept" });
    expect(net.IPAM.Options).to.deep.equal({ "example.ipam-option": "9-29-045" });
    const web = JSON.parse(await n.cli("inspect", "p4_web_1"))[0];
    expect(web.Mounts.map((m: { Type: string; Destination: string }) => `${m.Type} ${m.Destination}`).sort()).to.deep.equal(["tmpfs /scratch", "volume /data"]);
    // HostConfig shows the fields the request left out at Docker's zero values (compose compares PidMode with "")
    expect(web.HostConfig).to.include({ PidMode: "", UsernsMode: "", Privileged: false, CgroupParent: "", PublishAllPorts: false });
    expect(web.HostConfig).to.include.keys("Binds", "CapAdd", "Dns", "BlkioWeight", "CpuRealtimeRuntime", "MaskedPaths");
    expect(web.NetworkSettings.Networks.p4_front.IPAMConfig).to.deep.equal({ IPv4Address: "172.28.5.10", LinkLocalIPs: ["169.254.8.8"] });
    expect(await exec("p4_web_1", "ip -4 addr show eth0")).to.match(/inet 169\.254\.8\.8\/16 /);
    await composeOk("p4", "project4.yml", "down", "-v");
    expect(await n.cli("ps", "-aq", "--filter", "label=com.docker.compose.project=p4")).to.equal("");
  });
});

function ipOf(c: Inspected, network: string): string {
  const address = c.NetworkSettings.Networks[network]?.IPAddress;
  expect(address, `${c.Name} on ${network}`).to.match(/^\d+\.\d+\.\d+\.\d+$/);
  return address;
}
