/** The daemon's log formats, as operators of Docker's daemon read them. */
import { expect } from "chai";
import { createLogger } from "../host/logger.js";

function capture(opts: { format: "text" | "json"; rawLogs: boolean; isTTY: boolean }) {
  const lines: string[] = [];
  const log = createLogger({ level: "debug", ...opts, write: (l) => lines.push(l) });
  return { log, lines };
}

describe("daemon log formats", () => {
  it("json: level as a logrus word, msg, RFC 3339 time, and fields", () => {
    const { log, lines } = capture({ format: "json", rawLogs: false, isTTY: false });
    log.warn({ socket: "/run/x.sock" }, "careful");
    const entry = JSON.parse(lines[0]);
    expect(entry).to.include({ level: "warning", msg: "careful", socket: "/run/x.sock" });
    expect(new Date(entry.time).toISOString()).to.equal(entry.time);
  });

  it("text: time, level and msg first, values quoted as logrus quotes them", () => {
    const { log, lines } = capture({ format: "text", rawLogs: false, isTTY: false });
    log.info({ address: "unix:///run/x.sock", plain: "abc", n: 3 }, "API listen on unix:///run/x.sock");
    expect(lines[0]).to.match(
      /^time="\d{4}-\d\d-\d\dT[\d:.]+Z" level=info msg="API listen on unix:\/\/\/run\/x.sock" address="unix:\/\/\/run\/x.sock" plain=abc n=3\n$/,
    );
  });

  it("on a terminal: the short coloured form, unless --raw-logs asks for full lines", () => {
    const tty = capture({ format: "text", rawLogs: false, isTTY: true });
    tty.log.error("it broke");
    expect(tty.lines[0]).to.match(/^\x1b\[31mERRO\x1b\[0m\[\d{4}\] it broke\n$/);
    const raw = capture({ format: "text", rawLogs: true, isTTY: true });
    raw.log.error("it broke");
    expect(raw.lines[0]).to.match(/^time="[^"]+" level=error msg="it broke"\n$/);
    expect(raw.lines[0]).to.not.include("\x1b[");
  });
});
