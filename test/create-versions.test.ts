/**
 * A create's request at the API version its client speaks (host/containers/create-versions.ts),
 * as Docker's create route adapts it: fields of later versions dropped for older clients,
 * combinations refused, and the container-wide MAC address moved to the main network's endpoint
 * (with Docker's warning) from API 1.44. No daemon: the function alone, on request bodies.
 */
import { expect } from "chai";
import type { ContainerCreateRequest } from "../core/containers/container-config.js";
import { EngineError } from "../core/errors.js";
import { adaptCreateToVersion, MAC_ADDRESS_DEPRECATED, VOLUME_DRIVER_IGNORED } from "../host/containers/create-versions.js";

const refusal = (body: ContainerCreateRequest, version: string): string => {
  try {
    adaptCreateToVersion(body, version);
  } catch (err) {
    expect(err).to.be.instanceOf(EngineError);
    expect((err as EngineError).statusCode).to.equal(400);
    return (err as Error).message;
  }
  throw new Error(`not refused at ${version}: ${JSON.stringify(body)}`);
};

describe("a create's request at its API version", () => {
  it("drops what an older version did not have: annotations before 1.43, the start interval before 1.44, the console size and a mount's options of another type before 1.42", () => {
    const body: ContainerCreateRequest = {
      Image: "busybox",
      Healthcheck: { Test: ["CMD", "true"], StartInterval: 2e9 },
      HostConfig: {
        Annotations: { a: "b" },
        ConsoleSize: [10, 20],
        Mounts: [{ Type: "bind", Source: "/tmp", Target: "/x", TmpfsOptions: { SizeBytes: 1000 }, BindOptions: { CreateMountpoint: true } }],
      },
    };
    expect(adaptCreateToVersion(body, "1.41")).to.deep.equal([]);
    expect(body.HostConfig?.Annotations).to.equal(undefined);
    expect(body.Healthcheck).to.deep.equal({ Test: ["CMD", "true"] });
    expect(body.HostConfig?.ConsoleSize).to.deep.equal([0, 0]);
    expect(body.HostConfig?.Mounts?.[0].TmpfsOptions).to.equal(null);
    expect(body.HostConfig?.Mounts?.[0].BindOptions?.CreateMountpoint).to.equal(false);
    // kept at the versions that have them
    const newer: ContainerCreateRequest = { Image: "busybox", Healthcheck: { StartInterval: 2e9 }, HostConfig: { Annotations: { a: "b" }, ConsoleSize: [10, 20] } };
    adaptCreateToVersion(newer, "1.44");
    expect([newer.HostConfig?.Annotations, newer.Healthcheck?.StartInterval, newer.HostConfig?.ConsoleSize]).to.deep.equal([{ a: "b" }, 2e9, [10, 20]]);
    // an IPC mode left out was shareable for clients before 1.40
    const old: ContainerCreateRequest = { Image: "busybox" };
    adaptCreateToVersion(old, "1.39");
    expect(old.HostConfig?.IpcMode).to.equal("shareable");
  });

  it("refuses in Docker's words what a version cannot take", () => {
    expect(refusal({ Image: "b", HostConfig: { Mounts: [{ Type: "tmpfs", Target: "/x", VolumeOptions: { NoCopy: true } }] } }, "1.44")).to.equal('VolumeOptions must not be specified on mount type "tmpfs"');
    expect(refusal({ Image: "b", HostConfig: { Mounts: [{ Type: "volume", Target: "/x", BindOptions: {} }] } }, "1.51")).to.equal('BindOptions must not be specified on mount type "volume"');
    expect(refusal({ Image: "b", HostConfig: { Mounts: [{ Type: "bind", Source: "/tmp", Target: "/x", BindOptions: { ReadOnlyForceRecursive: true } }] } }, "1.43")).to.equal(
      "BindOptions.ReadOnlyForceRecursive needs API v1.44 or newer",
    );
    expect(refusal({ Image: "b", NetworkingConfig: { EndpointsConfig: { n1: {}, n2: {} } } }, "1.43")).to.equal("Container cannot be created with multiple network endpoints: n1, n2");
    expect(refusal({ Image: "b", HostConfig: { Mounts: [{ Type: "volume", Source: "v", Target: "/x", VolumeOptions: { Subpath: "a" } }] } }, "1.44")).to.equal("VolumeOptions.Subpath needs API v1.45 or newer");
    // the same at the versions that take them
    expect(() => adaptCreateToVersion({ Image: "b", NetworkingConfig: { EndpointsConfig: { n1: {}, n2: {} } } }, "1.44")).to.not.throw();
  });

  it("moves the container-wide MAC address to the main network's endpoint from 1.44, with Docker's warning", () => {
    const body: ContainerCreateRequest = { Image: "b", MacAddress: "02:42:ac:11:00:55" };
    expect(adaptCreateToVersion(body, "1.44")).to.deep.equal([MAC_ADDRESS_DEPRECATED]);
    expect(body.MacAddress).to.equal(undefined);
    // the default network by the name the create reads as it (none on a daemon without one)
    expect(body.NetworkingConfig?.EndpointsConfig).to.deep.equal({ default: { MacAddress: "02:42:ac:11:00:55" } });
    const named: ContainerCreateRequest = { Image: "b", MacAddress: "02:42:ac:11:00:55", HostConfig: { NetworkMode: "net1" }, NetworkingConfig: { EndpointsConfig: { net1: { Aliases: ["a"] } } } };
    adaptCreateToVersion(named, "1.51");
    expect(named.NetworkingConfig?.EndpointsConfig).to.deep.equal({ net1: { Aliases: ["a"], MacAddress: "02:42:ac:11:00:55" } });
    expect(refusal({ Image: "b", MacAddress: "02:42:ac:11:00:55", HostConfig: { NetworkMode: "net1" }, NetworkingConfig: { EndpointsConfig: { net2: {} } } }, "1.44")).to.equal(
      "if a container-wide MAC address is supplied, HostConfig.NetworkMode must match the identity of a network in NetworkSettings.Networks",
    );
    expect(refusal({ Image: "b", MacAddress: "02:42:ac:11:00:55", HostConfig: { NetworkMode: "net1" }, NetworkingConfig: { EndpointsConfig: { net1: { MacAddress: "02:42:ac:11:00:66" } } } }, "1.44")).to.equal(
      "the container-wide MAC address must match the endpoint-specific MAC address for the main network, or be left empty",
    );
    // on the host's network from 1.44 it is dropped with the warning; before, refused
    const host: ContainerCreateRequest = { Image: "b", MacAddress: "02:42:ac:11:00:55", HostConfig: { NetworkMode: "host" } };
    expect(adaptCreateToVersion(host, "1.44")).to.deep.equal([MAC_ADDRESS_DEPRECATED]);
    expect(host.MacAddress).to.equal(undefined);
    expect(refusal({ Image: "b", MacAddress: "02:42:ac:11:00:55", HostConfig: { NetworkMode: "none" } }, "1.43")).to.equal("conflicting options: mac-address and the network mode");
  });

  it("drops AutoRemove before 1.25 and an endpoint's GwPriority before 1.48, refuses an image mount before 1.48, and warns of a VolumeDriver the mounts' volumes do not use from 1.48", () => {
    const old: ContainerCreateRequest = { Image: "b", HostConfig: { AutoRemove: true }, NetworkingConfig: { EndpointsConfig: { n1: { GwPriority: 5 } } } };
    expect(adaptCreateToVersion(old, "1.24")).to.deep.equal([]);
    expect([old.HostConfig?.AutoRemove, old.NetworkingConfig?.EndpointsConfig?.n1]).to.deep.equal([false, {}]);
    const newer: ContainerCreateRequest = { Image: "b", HostConfig: { AutoRemove: true }, NetworkingConfig: { EndpointsConfig: { n1: { GwPriority: 5 } } } };
    adaptCreateToVersion(newer, "1.48");
    expect([newer.HostConfig?.AutoRemove, newer.NetworkingConfig?.EndpointsConfig?.n1]).to.deep.equal([true, { GwPriority: 5 }]);
    const imageMount = (): ContainerCreateRequest => ({ Image: "b", HostConfig: { Mounts: [{ Type: "image", Source: "busybox", Target: "/i" }] } });
    expect(refusal(imageMount(), "1.47")).to.equal('Mount type "Image" needs API v1.48 or newer');
    expect(() => adaptCreateToVersion(imageMount(), "1.48")).to.not.throw();
    const driver = (version: string, name?: string) =>
      adaptCreateToVersion({ Image: "b", HostConfig: { VolumeDriver: "d", Mounts: [{ Type: "volume", Source: "v", Target: "/v", ...(name ? { VolumeOptions: { DriverConfig: { Name: name } } } : {}) }] } }, version);
    expect([driver("1.48"), driver("1.47"), driver("1.51", "local")]).to.deep.equal([[VOLUME_DRIVER_IGNORED], [], []]);
  });

  it("before 1.41 gives a container without a cgroup namespace mode the host's on a cgroup v1 host, and leaves it to the daemon's default otherwise", () => {
    const mode = (version: string, cgroupVersion: number, asked?: "private") => {
      const body: ContainerCreateRequest = { Image: "b", HostConfig: asked ? { CgroupnsMode: asked } : {} };
      adaptCreateToVersion(body, version, { cgroupVersion });
      return body.HostConfig?.CgroupnsMode;
    };
    expect([mode("1.40", 1), mode("1.40", 1, "private"), mode("1.41", 1), mode("1.40", 2)]).to.deep.equal(["host", "private", undefined, undefined]);
  });

  it("moves a container-wide eth0 sysctl to the main endpoint up to 1.47 with Docker's warning, and refuses it from 1.48", () => {
    const body = (): ContainerCreateRequest => ({ Image: "b", HostConfig: { NetworkMode: "n1", Sysctls: { "net.ipv4.conf.eth0.forwarding": "1" } } });
    const moved = body();
    expect(adaptCreateToVersion(moved, "1.47")).to.deep.equal(['Migrated sysctl "net.ipv4.conf.eth0.forwarding" to DriverOpts{"com.docker.network.endpoint.sysctls":"net.ipv4.conf.IFNAME.forwarding=1"}.']);
    expect(moved.NetworkingConfig?.EndpointsConfig?.n1?.DriverOpts).to.deep.equal({ "com.docker.network.endpoint.sysctls": "net.ipv4.conf.IFNAME.forwarding=1" });
    expect(refusal(body(), "1.48")).to.equal(`interface specific sysctl setting "net.ipv4.conf.eth0.forwarding" must be supplied using driver option 'com.docker.network.endpoint.sysctls'`);
  });

  it("before 1.44 applies the container-wide MAC address to its one network, and drops an endpoint's (which did not exist)", () => {
    const body: ContainerCreateRequest = { Image: "b", MacAddress: "02:42:ac:11:00:55", HostConfig: { NetworkMode: "bridge" } };
    expect(adaptCreateToVersion(body, "1.43")).to.deep.equal([]);
    expect(body.MacAddress).to.equal("02:42:ac:11:00:55");
    expect(body.NetworkingConfig?.EndpointsConfig).to.deep.equal({ bridge: { MacAddress: "02:42:ac:11:00:55" } });
    const endpointOnly: ContainerCreateRequest = { Image: "b", NetworkingConfig: { EndpointsConfig: { net1: { MacAddress: "02:42:ac:11:00:66", Aliases: ["x"] } } } };
    adaptCreateToVersion(endpointOnly, "1.43");
    expect(endpointOnly.NetworkingConfig?.EndpointsConfig).to.deep.equal({ net1: { Aliases: ["x"] } });
  });
});
