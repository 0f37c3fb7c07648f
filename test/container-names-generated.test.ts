/** Generated container names: `<adjective>_<noun>`, a number added once names repeat, the catalogue's error when none is free. */
import { expect } from "chai";
import { generateName } from "../core/containers/names.js";
import { errors, EngineError } from "../core/errors.js";

describe("container names: generated", () => {
  it("generates <adjective>_<noun>, and one not taken", () => {
    expect(generateName(() => false)).to.match(/^[a-z]+_[a-z]+$/);
    const taken = new Set<string>();
    for (let i = 0; i < 50; i++) taken.add(generateName((n) => taken.has(n)));
    expect(taken.size).to.equal(50);
  });

  it("answers the catalogue's 500 when every name it tries is taken", () => {
    let err: unknown;
    try {
      generateName(() => true);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(EngineError);
    expect(err).to.include({ code: errors.containerNoFreeName.code, statusCode: 500, message: "no free container name found" });
  });
});
