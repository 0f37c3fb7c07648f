/** Reading a line from the terminal for `login`: the user name as typed, the password without echo. */

/** Writes `question` and reads one line from stdin (a terminal); `hidden` turns the echo off. */
export async function promptLine(question: string, write: (t: string) => void, hidden = false): Promise<string> {
  const stdin = process.stdin;
  write(question);
  const raw = hidden && stdin.isTTY;
  if (raw) stdin.setRawMode(true);
  stdin.setEncoding("utf8");
  try {
    return await new Promise<string>((resolve, reject) => {
      let line = "";
      const done = (value: string | Error) => {
        stdin.off("data", onData);
        stdin.off("end", onEnd);
        stdin.pause();
        if (value instanceof Error) reject(value);
        else resolve(value);
      };
      const onEnd = () => done(line);
      const onData = (text: string) => {
        for (const c of text) {
          if (c === "\r" || c === "\n") return done(line);
          if (raw && c === "\x03") return done(new Error("interrupted"));
          if (raw && c === "\x04" && line === "") return done(line);
          if (raw && (c === "\x7f" || c === "\b")) line = line.slice(0, -1);
          else line += c;
        }
      };
      stdin.on("data", onData);
      stdin.once("end", onEnd);
      stdin.resume();
    });
  } finally {
    if (raw) stdin.setRawMode(false);
  }
}
