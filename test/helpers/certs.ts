/**
 * A certificate authority, a server certificate for 127.0.0.1 and localhost, and a client
 * certificate, made with openssl in a temporary folder, laid out the way both engined
 * (`--tlscacert/--tlscert/--tlskey`) and the Docker CLI (`DOCKER_CERT_PATH`: ca.pem, cert.pem,
 * key.pem) expect. A second, unrelated CA signs a "rogue" client that must be refused.
 * More clients and server certificates with a chosen key size and digest come from
 * makeClientCert and makeServerCert (weak ones, for the security-level tests).
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

function makeCa(dir: string, name: string, bits = 2048): void {
  openssl(["req", "-x509", "-newkey", `rsa:${bits}`, "-nodes", "-days", "2", "-subj", `/CN=${name}`,
    "-keyout", `${name}-key.pem`, "-out", `${name}.pem`], dir);
}

/** The key's size and the digest the CA signs with: 2048-bit RSA and SHA-256 unless said. */
export interface KeyChoice {
  bits?: number;
  digest?: "sha256" | "sha1" | "md5";
}

function signed(dir: string, ca: string, name: string, cn: string, ext: string, key: KeyChoice = {}): void {
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(["req", "-newkey", `rsa:${key.bits ?? 2048}`, "-nodes", "-subj", `/CN=${cn}`, "-keyout", `${name}-key.pem`, "-out", `${name}.csr`], dir);
  openssl(["x509", "-req", "-in", `${name}.csr`, "-CA", `${ca}.pem`, "-CAkey", `${ca}-key.pem`, "-CAcreateserial",
    "-days", "2", `-${key.digest ?? "sha256"}`, "-extfile", `${name}.ext`, "-out", `${name}.pem`], dir);
}

/** Another CA in the set's folder (`<name>.pem`), with an RSA key of this size. */
export function makeExtraCa(certs: CertSet, name: string, bits: number): string {
  makeCa(certs.dir, name, bits);
  return join(certs.dir, `${name}.pem`);
}

/**
 * One more client, of the set's CA or of one made by makeExtraCa, in a folder of its own laid
 * out as clientDir is (its ca.pem is the set's CA, which signed the daemon's certificate).
 */
export function makeClientCert(certs: CertSet, name: string, key: KeyChoice, ca = "ca"): string {
  signed(certs.dir, ca, name, name, "extendedKeyUsage=clientAuth\n", key);
  return folderFor(certs.dir, name, name);
}

/** One more server certificate of the set's CA (for 127.0.0.1 and localhost): its cert and key paths. */
export function makeServerCert(certs: CertSet, name: string, key: KeyChoice): { cert: string; key: string } {
  signed(certs.dir, "ca", name, "localhost", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n", key);
  return { cert: join(certs.dir, `${name}.pem`), key: join(certs.dir, `${name}-key.pem`) };
}

function folderFor(dir: string, name: string, folder: string): string {
  const target = join(dir, folder);
  mkdirSync(target);
  execFileSync("cp", [join(dir, "ca.pem"), join(target, "ca.pem")]);
  execFileSync("cp", [join(dir, `${name}.pem`), join(target, "cert.pem")]);
  execFileSync("cp", [join(dir, `${name}-key.pem`), join(target, "key.pem")]);
  return target;
}

export function makeCerts(dir: string): CertSet {
  mkdirSync(dir, { recursive: true });
  makeCa(dir, "ca");
  makeCa(dir, "rogue-ca");
  signed(dir, "ca", "server", "localhost", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
  signed(dir, "ca", "client", "test-client", "extendedKeyUsage=clientAuth\n");
  signed(dir, "rogue-ca", "rogue", "rogue-client", "extendedKeyUsage=clientAuth\n");
  const clientDir = folderFor(dir, "client", "client");
  const rogueDir = folderFor(dir, "rogue", "rogue");
  return {
    dir,
    ca: join(dir, "ca.pem"),
    serverCert: join(dir, "server.pem"),
    serverKey: join(dir, "server-key.pem"),
    clientDir,
    rogueDir,
  };
}
