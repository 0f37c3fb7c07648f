/**
 * The supervisor process: `node dist/host/supervisor/main.js --socket S --root R --namespace N`.
 * engined starts one by default (see launch.ts) and it outlives engined; an operator may
 * start one by hand and point `engined --supervisor S` at it. On SIGTERM it stops serving and
 * leaves the containers running: they belong to their conmon, not to this process.
 */
import { chmodSync, mkdirSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { parseArgs } from "node:util";
import { supervisorServer } from "./server.js";
import { logDriverLoader } from "./log-drivers.js";
import { Supervisor } from "./supervisor.js";

const { values } = parseArgs({
  options: { socket: { type: "string" }, root: { type: "string" }, namespace: { type: "string", default: "engine" } },
});
if (!values.socket || !values.root) {
  process.stderr.write("supervisor: --socket and --root are required\n");
  process.exit(2);
}
const socket = values.socket;
mkdirSync(dirname(socket), { recursive: true, mode: 0o700 });
rmSync(socket, { force: true });
const supervisor = new Supervisor(values.root, values.namespace!, logDriverLoader(values.root));
await supervisor.resume();
const server = supervisorServer(supervisor);
server.listen(socket, () => {
  chmodSync(socket, 0o600);
  process.stdout.write(`supervisor: serving namespace ${values.namespace} on ${socket}\n`);
});
const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
  rmSync(socket, { force: true });
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
