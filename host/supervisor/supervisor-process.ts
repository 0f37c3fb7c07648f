/**
 * The supervisor process, entered through main.ts (`node dist/host/supervisor/main.js --socket S
 * --root R --namespace N [--conmon PATH]`; its pid is written to `<root>/supervisor.pid`, or
 * `--pidfile`). Its settings come as flags only: engined passes its own (`--conmon`, from the
 * daemon's `conmon` option) when it starts one.
 * engined starts one by default (see launch.ts) and it outlives engined; an operator may
 * start one by hand and point `engined --supervisor S` at it. On SIGTERM it stops serving and
 * leaves the containers running: they belong to their conmon, not to this process.
 */
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { supervisorServer } from "./server.js";
import { supervisorLogDrivers } from "../plugins/log-drivers.js";
import { Supervisor } from "./supervisor.js";
import { configureKillPoints } from "../../core/kill-points.js";
import { startDone } from "../bundle-entries.js";

const { values } = parseArgs({
  options: {
    socket: { type: "string" },
    root: { type: "string" },
    namespace: { type: "string", default: "engine" },
    pidfile: { type: "string" },
    conmon: { type: "string" },
  },
});
// the crash tests' kill points (core/kill-points.ts), counted from the start
configureKillPoints("ENGINE_SUPERVISOR", process.env, { armed: true });
if (!values.socket || !values.root) {
  process.stderr.write("supervisor: --socket and --root are required\n");
  process.exit(2);
}
const socket = values.socket;
const pidfile = values.pidfile ?? join(values.root, "supervisor.pid");
mkdirSync(dirname(socket), { recursive: true, mode: 0o700 });
mkdirSync(dirname(pidfile), { recursive: true, mode: 0o700 });
writeFileSync(pidfile, `${process.pid}\n`);
rmSync(socket, { force: true });
const supervisor = new Supervisor(values.root, values.namespace!, supervisorLogDrivers(values.root), values.conmon);
const server = supervisorServer(supervisor);
const stop = async () => {
  // Its conmons first: none may stay stopped by the spool guard once this process is gone.
  await supervisor.close();
  server.close(() => process.exit(0));
  server.closeAllConnections();
  rmSync(socket, { force: true });
  // Only our own pid file: a successor may have written its pid there already.
  try {
    if (readFileSync(pidfile, "utf8").trim() === String(process.pid)) rmSync(pidfile, { force: true });
  } catch {
    // gone already
  }
};
// Serves once its containers are resumed. (No top-level await: the bundle's chunks are
// CommonJS bodies, core/chunk-loader.cts.)
supervisor.resume().then(
  () => {
    server.listen(socket, () => {
      chmodSync(socket, 0o600);
      process.stdout.write(`supervisor: serving namespace ${values.namespace} on ${socket}\n`);
      startDone();
    });
    process.on("SIGTERM", () => void stop());
    process.on("SIGINT", () => void stop());
  },
  (err: Error) => {
    process.stderr.write(`supervisor: ${err.stack ?? err.message}\n`);
    process.exit(1);
  },
);
