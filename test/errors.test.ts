/** The error catalogue and its documentation say the same thing. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { EngineError, errors, toEngineError } from "../core/errors.js";
import { ROOT } from "./helpers/engined.js";

describe("error catalogue", () => {
  it("has every code, with its status, in docs/errors.md and nothing else", () => {
    const doc = readFileSync(join(ROOT, "docs/errors.md"), "utf8");
    const documented = [...doc.matchAll(/^\| `(ENGINE_ERR_[A-Z_]+)` \| (\d{3}) \|/gm)].map((m) => `${m[1]} ${m[2]}`).sort();
    const catalogue = Object.values(errors).map((d) => `${d.code} ${d.statusCode}`).sort();
    expect(documented).to.deep.equal(catalogue);
  });

  it("has unique codes shaped ENGINE_ERR_<AREA>_<WHAT>", () => {
    const codes = Object.values(errors).map((d) => d.code);
    expect(new Set(codes).size).to.equal(codes.length);
    for (const code of codes) expect(code).to.match(/^ENGINE_ERR_[A-Z]+_[A-Z_]+$/);
  });

  it("makes errors that carry their code and status, and turns anything else into a 500", () => {
    const err = errors.apiVersionTooNew("1.99", "1.51");
    expect(err).to.be.instanceOf(EngineError);
    expect(err.code).to.equal("ENGINE_ERR_API_VERSION_TOO_NEW");
    expect(err.statusCode).to.equal(400);
    const wrapped = toEngineError(new TypeError("x is undefined"));
    expect(wrapped.statusCode).to.equal(500);
    expect(wrapped.message).to.equal("x is undefined");
    expect(toEngineError(err)).to.equal(err);
  });
});
