/**
 * TLS for TCP listeners. `--tls` serves TLS with `--tlscert` and `--tlskey`; `--tlsverify`
 * also requires a client certificate signed by `--tlscacert` and refuses the handshake
 * without one. TLS 1.0 and later, as the spec requires; SSLv3 and earlier never (Node's
 * OpenSSL has no SSLv3 at all). OpenSSL 3 refuses TLS 1.0 and 1.1 at its default security
 * level, so the level is lowered to 0: old clients can connect, and the cipher preference
 * (strongest first) still gives TLS 1.2 and 1.3 clients what they would get anyway.
 */
import { readFileSync } from "node:fs";
import type { TlsOptions } from "node:tls";
import { errors } from "../../core/errors.js";

export interface TlsSettings {
  verify: boolean;
  cacert: string;
  cert: string;
  key: string;
}

export function loadTlsOptions(settings: TlsSettings): TlsOptions {
  const options: TlsOptions = {
    cert: readPem("certificate", settings.cert),
    key: readPem("key", settings.key),
    minVersion: "TLSv1",
    ciphers: "DEFAULT:@SECLEVEL=0",
    honorCipherOrder: true,
  };
  if (settings.verify) {
    options.ca = readPem("CA certificate", settings.cacert);
    options.requestCert = true;
    options.rejectUnauthorized = true;
  }
  return options;
}

function readPem(what: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw errors.tlsFileUnreadable(what, path, (err as NodeJS.ErrnoException).code ?? (err as Error).message);
  }
}
