/** The Docker CLI's "[y/N]" question before a prune: anything but y or Y (or the input's end) is no. */

/** One line from standard input (the answer), or "" at its end. */
export async function readAnswer(): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    const onData = (d: Buffer) => {
      text += d.toString();
      if (text.includes("\n")) done();
    };
    const done = () => {
      process.stdin.off("data", onData);
      process.stdin.off("end", done);
      process.stdin.pause();
      resolve(text.split("\n")[0].trim());
    };
    process.stdin.on("data", onData);
    process.stdin.once("end", done);
    process.stdin.resume();
  });
}

/** Asks `warning` (which ends with the question) and resolves with the answer being yes. */
export async function confirm(write: (t: string) => void, warning: string): Promise<boolean> {
  write(`${warning} [y/N] `);
  const answer = await readAnswer();
  return answer === "y" || answer === "Y";
}
