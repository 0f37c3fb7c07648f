/**
 * A certificate authority, a server certificate for 127.0.0.1 and localhost, and a client
 * certificate, made with openssl in a temporary folder, laid out the way both engined
 * (`--tlscacert/--tlscert/--tlskey`) and the Docker CLI (`DOCKER_CERT_PATH`: ca.pem, cert.pem,
 * key.pem) expect. A second, unrelated CA signs a "rogue" client that must be refused.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface CertSet {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  /** A folder with ca.pem, cert.pem, key.pem of a client the CA signed. */
  clientDir: string;
  /** The same layout for a client signed by another CA. */
  rogueDir: string;
}

function openssl(args: string[], cwd: string): void {
  execFileSync("openssl", args, { cwd, stdio: ["ignore", "ignore", "pipe"] });
}

function makeCa(dir: string, name: string): void {
  openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", `/CN=${name}`,
    "-keyout", `${name}-key.pem`, "-out", `${name}.pem`], dir);
}

function signed(dir: string, ca: string, name: string, cn: string, ext: string): void {
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(["req", "-newkey", "rsa:2048", "-nodes", "-subj", `/CN=${cn}`, "-keyout", `${name}-key.pem`, "-out", `${name}.csr`], dir);
  openssl(["x509", "-req", "-in", `${name}.csr`, "-CA", `${ca}.pem`, "-CAkey", `${ca}-key.pem`, "-CAcreateserial",
    "-days", "2", "-extfile", `${name}.ext`, "-out", `${name}.pem`], dir);
}

export function makeCerts(dir: string): CertSet {
  mkdirSync(dir, { recursive: true });
  makeCa(dir, "ca");
  makeCa(dir, "rogue-ca");
  signed(dir, "ca", "server", "localhost", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
  signed(dir, "ca", "client", "test-client", "extendedKeyUsage=clientAuth\n");
  signed(dir, "rogue-ca", "rogue", "rogue-client", "extendedKeyUsage=clientAuth\n");
  const clientDir = join(dir, "client");
  const rogueDir = join(dir, "rogue");
  for (const [target, name] of [[clientDir, "client"], [rogueDir, "rogue"]] as const) {
    mkdirSync(target);
    execFileSync("cp", [join(dir, "ca.pem"), join(target, "ca.pem")]);
    execFileSync("cp", [join(dir, `${name}.pem`), join(target, "cert.pem")]);
    execFileSync("cp", [join(dir, `${name}-key.pem`), join(target, "key.pem")]);
  }
  return {
    dir,
    ca: join(dir, "ca.pem"),
    serverCert: join(dir, "server.pem"),
    serverKey: join(dir, "server-key.pem"),
    clientDir,
    rogueDir,
  };
}
