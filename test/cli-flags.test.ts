/**
 * The client's flag parsing (cli/flags.ts) and usage errors: pflag's rules, as the Docker CLI
 * applies them, checked against the Docker CLI itself where it prints the same thing. No
 * daemon is needed: usage errors come before any connection.
 */
import { expect } from "chai";
import { parseFlags, UsageError, type FlagSpec } from "../cli/flags.js";
import { docker } from "./helpers/docker-cli.js";
import { engine } from "./helpers/engine-cli.js";
import "./helpers/root-hooks.js";

const SPECS: FlagSpec[] = [
  { name: "detach", short: "d", type: "bool", description: "" },
  { name: "interactive", short: "i", type: "bool", description: "" },
  { name: "tty", short: "t", type: "bool", description: "" },
  { name: "env", short: "e", type: "list", description: "" },
  { name: "name", type: "string", description: "" },
  { name: "last", short: "n", type: "int", description: "", default: -1 },
  { name: "sig-proxy", type: "bool", description: "", default: true },
];

describe("cli flags (pflag rules)", () => {
  it("reads groups, repeats, = forms, attached values and --bool=false", () => {
    const p = parseFlags(["-dit", "-e", "A=1", "-eB=2", "--env=C=3", "-e=D", "--name", "x", "-n5", "--sig-proxy=false", "img"], SPECS);
    expect(p.flags).to.deep.include({ detach: true, interactive: true, tty: true, name: "x", last: 5, "sig-proxy": false });
    expect(p.flags.env).to.deep.equal(["A=1", "B=2", "C=3", "D"]);
    expect(p.args).to.deep.equal(["img"]);
    expect([...p.given].sort()).to.deep.equal(["detach", "env", "interactive", "last", "name", "sig-proxy", "tty"]);
  });

  it("takes flags among the arguments, or stops at the first argument (run IMAGE CMD -l)", () => {
    expect(parseFlags(["a", "-d", "b"], SPECS).args).to.deep.equal(["a", "b"]);
    const run = parseFlags(["-d", "busybox", "ls", "-l", "--name", "y"], SPECS, false);
    expect(run.flags.detach).to.equal(true);
    expect(run.flags.name).to.equal("");
    expect(run.args).to.deep.equal(["busybox", "ls", "-l", "--name", "y"]);
    expect(parseFlags(["--", "-d"], SPECS).args).to.deep.equal(["-d"]);
  });

  it("keeps defaults for flags not given", () => {
    const p = parseFlags([], SPECS);
    expect(p.flags).to.deep.include({ detach: false, last: -1, "sig-proxy": true, name: "" });
    expect(p.flags.env).to.deep.equal([]);
  });

  it("fails with pflag's messages", () => {
    const msg = (argv: string[]) => {
      try {
        parseFlags(argv, SPECS);
      } catch (err) {
        expect(err).to.be.instanceOf(UsageError);
        return (err as Error).message;
      }
      throw new Error("expected a usage error");
    };
    expect(msg(["--foo"])).to.equal("unknown flag: --foo");
    expect(msg(["-z"])).to.equal("unknown shorthand flag: 'z' in -z");
    expect(msg(["-e"])).to.equal("flag needs an argument: 'e' in -e");
    expect(msg(["--name"])).to.equal("flag needs an argument: --name");
    expect(msg(["--last", "abc"])).to.equal(`invalid argument "abc" for "-n, --last" flag: strconv.ParseInt: parsing "abc": invalid syntax`);
    expect(msg(["--detach=maybe"])).to.equal(`invalid argument "maybe" for "-d, --detach" flag: strconv.ParseBool: parsing "maybe": invalid syntax`);
  });

  it("prints usage errors as the Docker CLI does, with the same exit statuses", async function () {
    this.timeout(60_000);
    // nothing listens here: a usage error must come before any connection
    const host = "unix:///nonexistent/engine-test.sock";
    const cases = [["ps", "--foo"], ["ps", "-z"], ["ps", "-n", "abc"], ["ps", "a", "b"], ["rm"], ["tag", "a"], ["network", "create"]];
    for (const args of cases) {
      const [ours, theirs] = await Promise.all([engine(host, args), docker(host, args)]);
      expect(ours.code, args.join(" ")).to.equal(theirs.code);
      expect(ours.stderr.replaceAll("engine", "docker"), args.join(" ")).to.equal(theirs.stderr);
    }
  });

  it("cannot reach a daemon that is not there: Docker's message, exit 1", async () => {
    const r = await engine("unix:///nonexistent/engine-test.sock", ["version"]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.include("Cannot connect to the engine daemon at unix:///nonexistent/engine-test.sock. Is the engine daemon running?");
  });
});
