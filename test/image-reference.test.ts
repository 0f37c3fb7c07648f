/**
 * Image references and platform specifiers read as Docker's parsers read them (distribution's
 * reference.ParseNormalizedNamed, containerd's platforms.Parse): white-box, no daemon.
 */
import { expect } from "chai";
import { formatReference, parseReference } from "../core/images/reference.js";
import { goArch, parsePlatformSpecifier } from "../core/images/platform-specifier.js";

describe("image references and platform specifiers", () => {
  it("reads Docker Hub's legacy name as docker.io, and a first component with a capital as a registry", () => {
    const full = (text: string) => formatReference(parseReference(text));
    expect(full("index.docker.io/busybox")).to.equal("docker.io/library/busybox:latest");
    expect(full("index.docker.io/library/busybox:1")).to.equal("docker.io/library/busybox:1");
    expect(full("index.docker.io/me/app")).to.equal("docker.io/me/app:latest");
    expect(full("HOSTNAME.DOMAIN.COM:443/foo/bar")).to.equal("HOSTNAME.DOMAIN.COM:443/foo/bar:latest");
    expect(full("Registry/app")).to.equal("Registry/app:latest");
    expect(() => parseReference("me/App")).to.throw("invalid reference format: repository name (me/App) must be lowercase");
    expect(() => parseReference("UPPER")).to.throw("invalid reference format: repository name (library/UPPER) must be lowercase");
  });

  it("reads platforms as containerd does, refusing in its words", () => {
    expect(parsePlatformSpecifier("linux/sparc64")).to.deep.equal({ os: "linux", architecture: "sparc64", variant: "" });
    expect(parsePlatformSpecifier("linux")).to.deep.equal({ os: "linux", architecture: goArch(), variant: "" });
    expect(parsePlatformSpecifier("arm64")).to.deep.equal({ os: "linux", architecture: "arm64", variant: "" });
    expect(parsePlatformSpecifier("macos/arm64")).to.deep.equal({ os: "darwin", architecture: "arm64", variant: "" });
    expect(parsePlatformSpecifier("Linux/X86_64")).to.deep.equal({ os: "linux", architecture: "amd64", variant: "" });
    expect(parsePlatformSpecifier("linux/arm64/v8")).to.deep.equal({ os: "linux", architecture: "arm64", variant: "v8" });
    expect(() => parsePlatformSpecifier("foobar")).to.throw('"foobar": unknown operating system or architecture: invalid argument');
    expect(() => parsePlatformSpecifier(" ")).to.throw('" " is an invalid OS component of " "');
    expect(() => parsePlatformSpecifier("linux/a b")).to.throw('"a b" is an invalid component of "linux/a b"');
    expect(() => parsePlatformSpecifier("a/b/c/d")).to.throw('"a/b/c/d": cannot parse platform specifier: invalid argument');
  });
});
