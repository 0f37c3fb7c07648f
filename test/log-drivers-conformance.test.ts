/**
 * The log conformance suite (log-conformance.ts) against every built-in log driver, each with
 * what it says it can do: json-file and local read back and rotate, json-file resumes exactly
 * once; syslog sends to a unix-socket server the test runs (rfc5424, parsed back here);
 * journald sends to the fake journal (log-journald-fake.ts) on a socket of the test's; none
 * keeps nothing and takes any option. A last check keeps the list whole: every log plugin
 * under plugins/ is in it.
 */
import "./helpers/root-hooks.js";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { expect } from "chai";
import { builtInPluginNames } from "./helpers/built-in-plugins.js";
import type { LogStream } from "../core/contracts/log.js";
import { createJournaldLogDriver } from "../plugins/log-journald/journald.js";
import { createJsonFileLogDriver } from "../plugins/log-json-file/json-file.js";
import { createLocalLogDriver } from "../plugins/log-local/local.js";
import { createNoneLogDriver } from "../plugins/log-none/none.js";
import { createSyslogLogDriver } from "../plugins/log-syslog/syslog.js";
import { makeTempDir } from "./helpers/engined.js";
import { logConformance } from "./log-conformance.js";
import { startFakeJournal, type FakeJournal } from "./log-journald-fake.js";

const work = makeTempDir("engine-log-drivers-conf-");
const BAD_TAG = { options: { tag: "{{.Nope}}" }, message: /can't evaluate field Nope/, at: "start" } as const;

// --- syslog: a unix stream server; rfc5424 lines `<PRI>1 TIME HOST TAG PID TAG - LINE\n` ----------
const syslogPath = join(work, "syslog.sock");
const syslogBytes: Buffer[] = [];
let syslog: Server | undefined;
const RFC5424 = /^<(\d+)>1 \S+ \S+ \S+ \S+ \S+ - (.*)$/;

function syslogReceived(): { line: string; stream: LogStream }[] {
  const text = Buffer.concat(syslogBytes).toString("utf8");
  return text
    .split("\n")
    .slice(0, -1) // what follows the last newline has not fully arrived
    .map((l) => {
      const m = RFC5424.exec(l);
      if (!m) throw new Error(`not an rfc5424 message: ${JSON.stringify(l)}`);
      return { line: m[2], stream: Number(m[1]) % 8 === 3 ? "stderr" : "stdout" } as const;
    });
}

// --- journald: the fake journal on a socket of the test's ---------------------------------------
const journalPath = join(work, "journal.sock");
let journal: FakeJournal | undefined;

function journalReceived(): { line: string; stream: LogStream }[] {
  if (journal!.malformed.length || journal!.dropped.length) throw new Error(`journal: ${JSON.stringify({ malformed: journal!.malformed, dropped: journal!.dropped })}`);
  return journal!.entries.map((e) => ({ line: e.get("MESSAGE")?.[0] ?? "", stream: e.get("PRIORITY")?.[0] === "3" ? "stderr" : "stdout" }));
}

before(async function () {
  syslog = createServer((sock) => sock.on("data", (d: Buffer) => syslogBytes.push(d)));
  await new Promise<void>((resolve) => syslog!.listen(syslogPath, resolve));
  journal = startFakeJournal(journalPath);
});
after(async function () {
  journal?.close();
  await new Promise<void>((resolve) => (syslog ? syslog.close(() => resolve()) : resolve()));
});

logConformance("json-file", createJsonFileLogDriver, {
  refused: [
    { options: { "max-size": "abc" }, message: /invalid size: 'abc'/, at: "start" },
    { options: { "max-file": "0" }, message: /max-file cannot be less than 1/, at: "start" },
    { options: { mode: "sometimes" }, message: /logging mode not supported: sometimes/, at: "validate" },
    BAD_TAG,
  ],
  rotation: {
    rotating: { "max-size": "500", "max-file": "4" },
    compressed: { "max-size": "500", "max-file": "4", compress: "true" },
  },
});

logConformance("local", createLocalLogDriver, {
  refused: [
    { options: { "max-size": "abc" }, message: /invalid value for max-size: abc/, at: "start" },
    { options: { "max-file": "1", compress: "true" }, message: /compression cannot be enabled when max file count is 1/, at: "start" },
    { options: { mode: "sometimes" }, message: /logging mode not supported: sometimes/, at: "validate" },
  ],
  rotation: {
    rotating: { "max-size": "500", "max-file": "4", compress: "false" },
    compressed: { "max-size": "500", "max-file": "4" },
  },
});

logConformance("syslog", createSyslogLogDriver, {
  base: { "syslog-address": `unix://${syslogPath}`, "syslog-format": "rfc5424" },
  refused: [
    { options: { "syslog-facility": "nowhere" }, message: /invalid syslog facility/, at: "validate" },
    { options: { "syslog-format": "prose" }, message: /Invalid syslog format/, at: "validate" },
    { options: { "syslog-address": "http://127.0.0.1" }, message: /syslog-address should be in form proto:\/\/address, got http:\/\/127\.0\.0\.1/, at: "validate" },
    BAD_TAG,
  ],
  received: syslogReceived,
});

logConformance("journald", () => createJournaldLogDriver(journalPath), {
  refused: [BAD_TAG],
  received: journalReceived,
});

logConformance("none", createNoneLogDriver, { acceptsAnyOption: true });

describe("log driver conformance: every built-in log driver", function () {
  it("is in this file's list", async function () {
    expect(await builtInPluginNames("log")).to.deep.equal(["journald", "json-file", "local", "none", "syslog"]);
  });
});
