/**
 * A request body that is no JSON, answered in the words of Go's decoder as Docker's routes read
 * bodies (httputils.ReadJSON: the first value, then "unexpected content after JSON" when more
 * than `]`, `}` or whitespace follows): the scanner alone (host/api/go-json-syntax.ts), the
 * answers of engined's routes, and the decoder's messages beside Docker's own daemon's (20.10,
 * whose exec route sends Go's message bare and reads no further than the first value).
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { readGoJson } from "../host/api/go-json-syntax.js";
import { useComparedDaemons } from "./helpers/daemon-compare.js";
import { startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";

const read = (text: string | Uint8Array) => readGoJson(typeof text === "string" ? Buffer.from(text, "utf8") : text);

// bodies whose first value Go's scanner refuses, with its words
const REFUSED: Array<[string, string]> = [
  ["{invalid json", "invalid character 'i' looking for beginning of object key string"],
  ["{", "unexpected EOF"],
  ['{"a"', "unexpected EOF"],
  ['{"a" 1}', "invalid character '1' after object key"],
  ['{"a":1 "b":2}', "invalid character '\"' after object key:value pair"],
  ['{"a":1,}', "invalid character '}' looking for beginning of object key string"],
  ["[1 2]", "invalid character '2' after array element"],
  ["[1,]", "invalid character ']' looking for beginning of value"],
  ["x", "invalid character 'x' looking for beginning of value"],
  ["'a'", "invalid character '\\'' looking for beginning of value"],
  ["tru", "unexpected EOF"],
  ["trve", "invalid character 'v' in literal true (expecting 'u')"],
  ["nul!", "invalid character '!' in literal null (expecting 'l')"],
  ["{\"a\":fals}", "invalid character '}' in literal false (expecting 'e')"],
  ["-", "unexpected EOF"],
  ["-a", "invalid character 'a' in numeric literal"],
  ["{\"a\":1.}", "invalid character '}' after decimal point in numeric literal"],
  ["{\"a\":1e+}", "invalid character '}' in exponent of numeric literal"],
  ["{\"a\":01}", "invalid character '1' after object key:value pair"],
  ['"a\\x"', "invalid character 'x' in string escape code"],
  ['"\\u12g4"', "invalid character 'g' in \\u hexadecimal character escape"],
  ['"a\tb"', "invalid character '\\t' in string literal"],
  ["\n\n{\n", "unexpected EOF"],
  ["{\"a\":\u0001}", "invalid character '\\x01' looking for beginning of value"],
];

describe("a body that is no JSON, in the words of Go's decoder", function () {
  this.timeout(120_000);

  describe("the scanner", () => {
    for (const [body, words] of REFUSED) {
      it(`refuses ${JSON.stringify(body)}`, () => {
        expect(read(body)).to.deep.equal({ error: `invalid JSON: ${words}` });
      });
    }

    it("takes the first value and refuses what follows it unless it is whitespace, ] or }", () => {
      expect(read('{"a":[1,{"b":null}]} \n')).to.deep.equal({ end: 20 });
      expect(read("{} }")).to.deep.equal({ end: 2 });
      expect(read("{}]")).to.deep.equal({ end: 2 });
      expect(read("1 2")).to.deep.equal({ error: "unexpected content after JSON" });
      expect(read("{} trailing content")).to.deep.equal({ error: "unexpected content after JSON" });
      expect(read("01")).to.deep.equal({ error: "unexpected content after JSON" });
      expect(read("1x")).to.deep.equal({ error: "unexpected content after JSON" });
    });

    it("says EOF for a body of whitespace alone", () => {
      expect(read(" \n\t")).to.deep.equal({ error: "invalid JSON: got EOF while reading request body" });
    });

    it("quotes a byte as Go quotes the rune of its number", () => {
      expect(read(Uint8Array.from([0x7b, 0xc3, 0xa9]))).to.deep.equal({ error: "invalid JSON: invalid character 'Ã' looking for beginning of object key string" });
      expect(read(Uint8Array.from([0x85]))).to.deep.equal({ error: "invalid JSON: invalid character '\\u0085' looking for beginning of value" });
      expect(read("\\")).to.deep.equal({ error: "invalid JSON: invalid character '\\\\' looking for beginning of value" });
    });

    it("follows a body nested deeper than a stack would (Go's limit of 10000)", () => {
      expect(read(`${"[".repeat(5000)}${"]".repeat(5000)}`)).to.deep.equal({ end: 10000 });
      expect(read("[".repeat(20000))).to.deep.equal({ error: "invalid JSON: exceeded max depth" });
    });
  });

  describe("engined's routes", () => {
    let d: TestDaemon;
    before(async () => {
      d = await startEngined();
    });
    after(async () => d?.stop());
    const post = (path: string, body: string) =>
      httpRequest({ socketPath: d.socket }, "POST", `/v1.51${path}`, Buffer.from(body));

    it("answers 400 in Docker's words on every route that reads a body (moby's TestVolumesInvalidJSON, TestNetworkInvalidJSON)", async () => {
      for (const path of ["/volumes/create", "/networks/create", "/containers/create", "/containers/none/exec", "/networks/none/connect"]) {
        const bad = await post(path, "{invalid json");
        expect([bad.status, JSON.parse(bad.body).message], path).to.deep.equal([400, "invalid JSON: invalid character 'i' looking for beginning of object key string"]);
        const more = await post(path, "{} trailing content");
        expect([more.status, JSON.parse(more.body).message], path).to.deep.equal([400, "unexpected content after JSON"]);
      }
    });

    it("takes a body whose first value is followed by } as Go's decoder does", async () => {
      const r = await post("/volumes/create", '{"Name":"goj1"} }');
      expect(r.status, r.body).to.equal(201);
      expect(JSON.parse(r.body).Name).to.equal("goj1");
      await httpRequest({ socketPath: d.socket }, "DELETE", "/v1.51/volumes/goj1");
    });
  });

  describe("beside Docker's own daemon", () => {
    const { itAnswersAlike } = useComparedDaemons();
    // the exec route of 20.10 sends the decoder's message bare; engined's (Docker 28's) has the prefix
    const lines = REFUSED.filter(([body]) => !body.includes("\u0001")).map(
      ([body]) =>
        `curl -s --unix-socket \${DOCKER_HOST#unix://} -X POST -H 'Content-Type: application/json' --data-binary ${shellQuote(body)} http://x/v1.41/containers/none/exec | sed 's/invalid JSON: //'`,
    );
    itAnswersAlike("refuses a malformed body with the decoder's own words", lines);
  });
});

function shellQuote(s: string): string {
  return `'${s.replaceAll("'", "'\\''")}'`;
}
