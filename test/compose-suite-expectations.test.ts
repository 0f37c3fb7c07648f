/**
 * What docker-compose 1.29's own integration tests (run against Debian's dockerd 20.10 and
 * against engined, each in a network namespace of its own) showed engined doing otherwise, each
 * reduced to the requests compose makes, against a daemon of its own network namespace.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { docker } from "./helpers/docker-cli.js";
import { startNetDaemon, type NetDaemon } from "./helpers/net-daemon.js";

describe("compose 1.29's integration suite, as engined answers it", function () {
  describe("a daemon whose namespace's loopback is down (rootless, or a namespace made for it)", function () {
    let n: NetDaemon;
    before(async function () {
      n = await startNetDaemon([], { prepare: (ns) => ns.run("ip", "link", "set", "lo", "down") });
    });
    after(async function () {
      await n?.stop();
    });

    it("brings it up for its first host-network container, as Docker's daemon does; a port published on 127.0.0.1 then starts (compose's test_port_with_explicit_interface)", async function () {
      expect(n.ns.run("ip", "-o", "link", "show", "lo")).to.not.match(/[<,]UP[,>]/);
      // a host-network container shares the daemon's namespace: Docker's libnetwork brings its
      // loopback up when it makes the sandbox these share
      const host = await docker(n.host, ["run", "--rm", "--network", "host", "busybox", "cat", "/sys/class/net/lo/operstate"]);
      expect(host.code, host.stderr).to.equal(0);
      expect(n.ns.run("ip", "-o", "link", "show", "lo")).to.match(/[<,]UP[,>]/);
      // what failed in compose's suite: the proxy of a port published on 127.0.0.1 could not bind
      const published = await docker(n.host, ["run", "-d", "-p", "127.0.0.1:18101:80", "busybox", "httpd", "-f", "-p", "80"]);
      expect(published.code, published.stderr).to.equal(0);
    });
  });
});
