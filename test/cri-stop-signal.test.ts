/**
 * The CRI's Signal enum against Linux's numbers (host/cri/containers/stop-signal.ts): each name
 * of the enum in runtime-v1.proto has a number, an image's STOPSIGNAL in any of Docker's forms
 * maps to its name, and CreateContainer's check refuses what is not in the enum.
 */
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { checkStopSignal, effectiveStopSignal, imageSignalName, signalNumber } from "../host/cri/containers/stop-signal.js";

const ROOT = new URL("../..", import.meta.url).pathname;

describe("CRI stop signals: the Signal enum and Linux's numbers", function () {
  it("every name of the proto's Signal enum but RUNTIME_DEFAULT has a number, the real-time ones from 34 to 64", function () {
    const proto = readFileSync(join(ROOT, "host/cri/proto/runtime-v1.proto"), "utf8");
    const body = /enum Signal \{([^}]*)\}/.exec(proto)![1];
    const names = [...body.matchAll(/(\w+) = (\d+);/g)].map((m) => m[1]).filter((n) => n !== "RUNTIME_DEFAULT");
    expect(names).to.have.length(65);
    for (const n of names) expect(signalNumber(n), n).to.be.a("number");
    expect(names.filter((n) => n.startsWith("SIGRT")).map((n) => signalNumber(n)).sort((a, b) => a! - b!)).to.deep.equal(Array.from({ length: 31 }, (_, i) => 34 + i));
    expect(signalNumber("SIGTERM")).to.equal(15);
    expect(signalNumber("SIGCLD")).to.equal(17);
    expect(signalNumber("RUNTIME_DEFAULT")).to.equal(undefined);
  });

  it("an image's STOPSIGNAL by name, short name, number or SIGRTMIN+n maps to the enum's name", function () {
    expect(imageSignalName("SIGQUIT")).to.equal("SIGQUIT");
    expect(imageSignalName("quit")).to.equal("SIGQUIT");
    expect(imageSignalName("3")).to.equal("SIGQUIT");
    expect(imageSignalName("6")).to.equal("SIGABRT");
    expect(imageSignalName("SIGRTMIN+3")).to.equal("SIGRTMINPLUS3");
    expect(imageSignalName("RTMAX-1")).to.equal("SIGRTMAXMINUS1");
    expect(imageSignalName("64")).to.equal("SIGRTMAX");
    expect(imageSignalName("SIGNOPE")).to.equal(undefined);
    expect(imageSignalName("")).to.equal(undefined);
  });

  it("the kubelet's signal wins over the image's, which wins over SIGTERM; a name outside the enum is refused naming the field", function () {
    expect(effectiveStopSignal("SIGINT", "SIGUSR1")).to.equal("SIGINT");
    expect(effectiveStopSignal("RUNTIME_DEFAULT", "SIGUSR1")).to.equal("SIGUSR1");
    expect(effectiveStopSignal(undefined, undefined)).to.equal("SIGTERM");
    expect(() => checkStopSignal("SIGHUP")).not.to.throw();
    expect(() => checkStopSignal("RUNTIME_DEFAULT")).not.to.throw();
    expect(() => checkStopSignal(99)).to.throw("invalid config.stop_signal: 99 is not a signal of the Signal enum");
  });
});
