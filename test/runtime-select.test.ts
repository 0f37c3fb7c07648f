/**
 * runtime-select: which OCI runtime binary runs a container, with which global arguments.
 * Real binaries: runc from the host (/usr/sbin/runc), scripts in a temporary folder.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { EngineError } from "../core/errors.js";
import { parseConfigFile } from "../core/options/config-file.js";
import { resolveOptions } from "../core/options/resolve.js";
import type { RuleHost } from "../core/options/rules.js";
import type { DaemonConfig } from "../core/options/table.js";
import { checkRuntimeName, selectRuntime } from "../host/containers/runtime-select.js";
import { parseDaemonArgs } from "../host/daemon-args.js";
import { makeTempDir } from "./helpers/engined.js";
import "./helpers/root-hooks.js";

const v1: RuleHost = { platform: "linux", cgroupVersion: 1, systemd: false };
const v2systemd: RuleHost = { platform: "linux", cgroupVersion: 2, systemd: true };
const PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const RUNC = "/usr/sbin/runc";

/** A resolved configuration from flags and, optionally, a daemon.json object. */
function config(args: string[] = [], file?: Record<string, unknown>): DaemonConfig {
  const fromFile = file ? parseConfigFile(JSON.stringify(file), "/etc/engine/daemon.json", "linux") : new Map();
  return resolveOptions(parseDaemonArgs(args), {}, fromFile).config;
}

/** The EngineError fn throws. */
function thrown(fn: () => unknown): EngineError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(EngineError);
    return err as EngineError;
  }
  throw new Error("expected an error");
}

describe("runtime-select", () => {
  let dir: string;
  let script: string; // executable
  let plain: string; // not executable
  let binDir: string; // on a test PATH: "myrt" (executable)
  let shadowDir: string; // on a test PATH before binDir: "myrt" (not executable)

  before(() => {
    dir = makeTempDir("engine-runtime-select-");
    script = join(dir, "fast-runtime");
    writeFileSync(script, "#!/bin/sh\nexec /usr/sbin/runc \"$@\"\n");
    chmodSync(script, 0o755);
    plain = join(dir, "plain-file");
    writeFileSync(plain, "#!/bin/sh\nexit 0\n");
    chmodSync(plain, 0o644);
    binDir = join(dir, "bin");
    shadowDir = join(dir, "shadow");
    mkdirSync(binDir);
    mkdirSync(shadowDir);
    writeFileSync(join(binDir, "myrt"), "#!/bin/sh\nexit 0\n");
    chmodSync(join(binDir, "myrt"), 0o755);
    writeFileSync(join(shadowDir, "myrt"), "#!/bin/sh\nexit 0\n");
    chmodSync(join(shadowDir, "myrt"), 0o644);
  });

  it("runs ocirun, the default, as runc found on PATH with the global runtime arguments", () => {
    for (const requested of [undefined, null, "", "ocirun"]) {
      expect(selectRuntime(config(), requested, v1, PATH)).to.deep.equal({ name: "ocirun", path: RUNC, args: [] });
    }
    expect(selectRuntime(config(), undefined, v2systemd, PATH)).to.deep.equal({ name: "ocirun", path: RUNC, args: ["--systemd-cgroup"] });
    expect(selectRuntime(config(["--exec-opt", "native.cgroupdriver=systemd"]), "ocirun", v1, PATH).args).to.deep.equal(["--systemd-cgroup"]);
    expect(selectRuntime(config(), undefined, v1).path).to.equal(RUNC); // process.env.PATH by default
    expect(() => checkRuntimeName(config(), undefined)).to.not.throw();
  });

  it("reports a missing runc as a 400 naming ocirun and runc", () => {
    const err = thrown(() => selectRuntime(config(), undefined, v1, binDir));
    expect(err.statusCode).to.equal(400);
    expect(err.code).to.equal("ENGINE_ERR_RUNTIME_BINARY_UNUSABLE");
    expect(err.message).to.equal("runtime ocirun: cannot use the binary runc: not found on PATH");
  });

  it("uses default-runtime when the container asks for none, and the requested name otherwise", () => {
    const c = config(["--add-runtime", `fast=${script}`, "--default-runtime", "fast"]);
    expect(selectRuntime(c, undefined, v1, PATH)).to.deep.equal({ name: "fast", path: script, args: [] });
    expect(selectRuntime(c, "ocirun", v1, PATH)).to.deep.equal({ name: "ocirun", path: RUNC, args: [] });
  });

  it("runs a path entry: absolute kept, global arguments then runtimeArgs", () => {
    const flag = config(["--add-runtime", `fast=${script}`]);
    expect(selectRuntime(flag, "fast", v1, PATH)).to.deep.equal({ name: "fast", path: script, args: [] });
    const file = config([], { runtimes: { fast: { path: script, runtimeArgs: ["--debug", "--log-format=json"] } } });
    expect(selectRuntime(file, "fast", v1, PATH)).to.deep.equal({ name: "fast", path: script, args: ["--debug", "--log-format=json"] });
    expect(selectRuntime(file, "fast", v2systemd, PATH).args).to.deep.equal(["--systemd-cgroup", "--debug", "--log-format=json"]);
  });

  it("looks a bare path up on PATH, skipping files that are not executable", () => {
    const c = config(["--add-runtime", "my=myrt"]);
    expect(selectRuntime(c, "my", v1, `${shadowDir}:${binDir}`).path).to.equal(join(binDir, "myrt"));
    expect(selectRuntime(config(["--add-runtime", "r=runc"]), "r", v1, PATH).path).to.equal(RUNC);
    const err = thrown(() => selectRuntime(c, "my", v1, `${shadowDir}:${PATH}`));
    expect(err.statusCode).to.equal(400);
    expect(err.message).to.equal("runtime my: cannot use the binary myrt: not found on PATH");
  });

  it("refuses a binary that is missing, not executable, a folder or a relative path, with 400 naming runtime and path", () => {
    const cases: [string, string][] = [
      // Docker's shim fails in these words (moby's TestRunWithRuntimeFromCommandLine)
      [join(dir, "missing"), "no such file or directory"],
      [plain, "not executable"],
      [binDir, "not a regular file"],
      ["./fast-runtime", "not an absolute path or a name on PATH"],
    ];
    for (const [path, why] of cases) {
      const c = config([], { runtimes: { bad: { path } } });
      expect(() => checkRuntimeName(c, "bad")).to.not.throw(); // create does not look at the binary
      const err = thrown(() => selectRuntime(c, "bad", v1, PATH));
      expect(err.statusCode).to.equal(400);
      expect(err.code).to.equal("ENGINE_ERR_RUNTIME_BINARY_UNUSABLE");
      expect(err.message).to.equal(`runtime bad: cannot use the binary ${path}: ${why}`);
    }
  });

  it("takes an io.supervisor.ocirun.v2 or io.containerd.runc.v2 entry as runc with BinaryName and SystemdCgroup", () => {
    const c = config([], {
      runtimes: {
        plainType: { runtimeType: "io.supervisor.ocirun.v2" },
        docker: { runtimeType: "io.containerd.runc.v2", options: { Root: "/run/other", NoPivotRoot: true } },
        custom: { runtimeType: "io.supervisor.ocirun.v2", options: { BinaryName: script, SystemdCgroup: true } },
        bare: { runtimeType: "io.containerd.runc.v2", options: { BinaryName: "myrt" } },
        notString: { runtimeType: "io.containerd.runc.v2", options: { BinaryName: 5, SystemdCgroup: "true" } },
      },
    });
    expect(selectRuntime(c, "plainType", v1, PATH)).to.deep.equal({ name: "plainType", path: RUNC, args: [] });
    expect(selectRuntime(c, "docker", v2systemd, PATH)).to.deep.equal({ name: "docker", path: RUNC, args: ["--systemd-cgroup"] });
    expect(selectRuntime(c, "custom", v1, PATH)).to.deep.equal({ name: "custom", path: script, args: ["--systemd-cgroup"] });
    expect(selectRuntime(c, "custom", v2systemd, PATH).args).to.deep.equal(["--systemd-cgroup"]); // not twice
    expect(selectRuntime(c, "bare", v1, binDir).path).to.equal(join(binDir, "myrt"));
    expect(selectRuntime(c, "notString", v1, PATH)).to.deep.equal({ name: "notString", path: RUNC, args: [] });
    const missing = config([], { runtimes: { gone: { runtimeType: "io.supervisor.ocirun.v2", options: { BinaryName: join(dir, "nope") } } } });
    expect(() => checkRuntimeName(missing, "gone")).to.not.throw();
    expect(thrown(() => selectRuntime(missing, "gone", v1, PATH)).message).to.equal(
      `runtime gone: cannot use the binary ${join(dir, "nope")}: no such file or directory`,
    );
  });

  it("refuses any other runtimeType, and a requested fully qualified shim name, with 400: no shims here", () => {
    const c = config([], { runtimes: { kata: { runtimeType: "io.containerd.kata.v2", options: { ConfigPath: "/etc/kata.toml" } } } });
    for (const check of [() => selectRuntime(c, "kata", v1, PATH), () => checkRuntimeName(c, "kata")]) {
      const err = thrown(check);
      expect(err.statusCode).to.equal(400);
      expect(err.code).to.equal("ENGINE_ERR_RUNTIME_NOT_SUPPORTED");
      expect(err.message).to.equal(
        "runtime kata (runtimeType io.containerd.kata.v2) is a supervisor shim: shims are not supported by this engine's supervisor (it runs OCI runtimes through conmon); register an OCI runtime binary with a path instead",
      );
    }
    for (const check of [() => selectRuntime(config(), "io.containerd.kata.v2", v1, PATH), () => checkRuntimeName(config(), "io.containerd.kata.v2")]) {
      const err = thrown(check);
      expect(err.statusCode).to.equal(400);
      expect(err.code).to.equal("ENGINE_ERR_RUNTIME_NOT_SUPPORTED");
      expect(err.message).to.match(/^runtime io\.containerd\.kata\.v2 is a supervisor shim: shims are not supported by this engine's supervisor \(it runs OCI runtimes through conmon\)/);
    }
    const byDefault = thrown(() => selectRuntime(config(["--default-runtime", "io.containerd.runsc.v1"]), undefined, v1, PATH));
    expect(byDefault.code).to.equal("ENGINE_ERR_RUNTIME_NOT_SUPPORTED");
    expect(byDefault.message).to.contain("runtime io.containerd.runsc.v1 is a supervisor shim");
  });

  it("takes the ocirun shim types asked for by name as runc", () => {
    for (const name of ["io.containerd.runc.v2", "io.supervisor.ocirun.v2"]) {
      expect(selectRuntime(config(), name, v1, PATH)).to.deep.equal({ name, path: RUNC, args: [] });
    }
  });

  it("takes Docker's name of its built-in runtime, runc, as ocirun (option parsing reserves the name; an entry made otherwise still wins)", () => {
    expect(selectRuntime(config(), "runc", v1, PATH)).to.deep.equal({ name: "runc", path: RUNC, args: [] });
    expect(() => checkRuntimeName(config(), "runc")).to.not.throw();
    expect(selectRuntime(config(["--default-runtime", "runc"]), undefined, v1, PATH)).to.deep.equal({ name: "runc", path: RUNC, args: [] });
    const c: DaemonConfig = { ...config(), "add-runtime": { runc: { path: script, runtimeArgs: ["--debug"] } } };
    expect(selectRuntime(c, "runc", v1, PATH)).to.deep.equal({ name: "runc", path: script, args: ["--debug"] });
  });

  it("refuses an unknown name with Docker's message and 400", () => {
    for (const name of ["nope", "/usr/sbin/runc", "crun"]) {
      for (const check of [() => selectRuntime(config(), name, v1, PATH), () => checkRuntimeName(config(), name)]) {
        const err = thrown(check);
        expect(err.statusCode).to.equal(400);
        expect(err.code).to.equal("ENGINE_ERR_RUNTIME_UNKNOWN");
        expect(err.message).to.equal(`unknown or invalid runtime name: ${name}`);
      }
    }
    const err = thrown(() => selectRuntime(config(["--default-runtime", "gone"]), undefined, v1, PATH));
    expect(err.message).to.equal("unknown or invalid runtime name: gone");
  });

  it("lets a runtimes entry named ocirun win over the built-in runc", () => {
    // Option parsing reserves the name; a configuration made otherwise still follows the entry.
    const c: DaemonConfig = { ...config(), "add-runtime": { ocirun: { path: script, runtimeArgs: ["--debug"] } } };
    expect(selectRuntime(c, undefined, v1, PATH)).to.deep.equal({ name: "ocirun", path: script, args: ["--debug"] });
  });
});
