// Whether a command is on the PATH (the benches compare with Docker's daemon only where it is installed).
import { execFileSync } from "node:child_process";

export function have(cmd) {
  try {
    execFileSync("which", [cmd], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
