/**
 * `engine`, the command-line client: global connection flags, then a command.
 *   engine [-H HOST] [--tls] [--tlsverify] [--tlscacert F] [--tlscert F] [--tlskey F] COMMAND
 */
import meow from "meow";
import { commands } from "./commands/index.js";
import { connect, DaemonError, type Connection } from "./connection.js";

const usage = `Usage:  engine [OPTIONS] COMMAND

A client for engined, the container engine.

Options:
  -H, --host string      Daemon socket to connect to (ENGINE_HOST; default unix:///var/run/engine.sock)
      --tls              Use TLS; implied by --tlsverify
      --tlscacert string Trust certs signed only by this CA (default ~/.engine/ca.pem)
      --tlscert string   Path to TLS certificate file (default ~/.engine/cert.pem)
      --tlskey string    Path to TLS key file (default ~/.engine/key.pem)
      --tlsverify        Use TLS and verify the remote (ENGINE_TLS_VERIFY)

Commands:
${commands.map((c) => `  ${c.name.padEnd(10)} ${c.description}`).join("\n")}
`;

async function main(): Promise<number> {
  const cli = meow(usage, {
    importMeta: import.meta,
    autoVersion: false,
    allowUnknownFlags: false,
    flags: {
      host: { type: "string", shortFlag: "H" },
      tls: { type: "boolean", default: false },
      tlsverify: { type: "boolean", default: false },
      tlscacert: { type: "string" },
      tlscert: { type: "string" },
      tlskey: { type: "string" },
    },
  });
  const [name, ...args] = cli.input;
  const command = commands.find((c) => c.name === name);
  if (!command) {
    process.stderr.write(name ? `engine: '${name}' is not an engine command.\nSee 'engine --help'\n` : usage);
    return name ? 1 : 0;
  }
  let connection: Connection | undefined;
  try {
    return await command.run({
      args,
      connection: () => (connection ??= connect(cli.flags, process.env)),
      stdout: (t) => process.stdout.write(t),
      stderr: (t) => process.stderr.write(t),
    });
  } catch (err) {
    const text = err instanceof DaemonError ? err.message : `Cannot connect to the engine daemon: ${(err as Error).message}`;
    process.stderr.write(`${text}\n`);
    return 1;
  } finally {
    await connection?.close();
  }
}

main().then((code) => process.exit(code));
