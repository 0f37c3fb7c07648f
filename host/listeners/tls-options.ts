/**
 * TLS for TCP listeners. `--tls` serves TLS with `--tlscert` and `--tlskey`; `--tlsverify`
 * also requires a client certificate signed by `--tlscacert` and refuses the handshake
 * without one. TLS 1.0 and later, as the spec requires; SSLv3 and earlier never (Node's
 * OpenSSL has no SSLv3 at all).
 *
 * Two contexts are made from the same files:
 * - `modern`, for every client that offers TLS 1.2 or 1.3: OpenSSL's security level 2, the
 *   default of OpenSSL 3.2 and later (Node 24 bundles 3.5) and of Debian's OpenSSL. It is
 *   written out rather than left to the library because the level can also come from an
 *   OpenSSL configuration or from a Node linked to an OpenSSL 3.0 or 3.1, whose default is 1
 *   and still lets a 1024-bit RSA key through; the TLS 1.0 path below applies level 2's rules
 *   itself, and both paths must refuse the same certificates. At level 2 OpenSSL refuses, in
 *   the handshake, client chains with an RSA or DSA key under 2048 bits, an EC key under 224
 *   bits, or an MD5 or SHA-1 signature.
 * - `legacy`, for clients that offer only TLS 1.0 or 1.1: OpenSSL 3 negotiates those only at
 *   security level 0 (their handshake signs with MD5+SHA-1), so this context is at level 0 and
 *   limited to those two versions; tls-server.ts applies level 2's certificate rules to the
 *   client's chain (cert-strength.ts) before a request is read.
 *
 * The daemon's own certificate and key are checked at start with the same rules: a weak one
 * is a start error naming the files, not a handshake that fails for every client.
 */
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { createSecureContext, DEFAULT_CIPHERS, type SecureContextOptions } from "node:tls";
import { errors } from "../../core/errors.js";
import { certWeakness } from "./cert-strength.js";

export interface TlsSettings {
  verify: boolean;
  cacert: string;
  cert: string;
  key: string;
}

export interface TlsSetup {
  /** Client certificates are required and verified (`--tlsverify`). */
  verify: boolean;
  /** The options of the two contexts (each TLS server makes its own from them). */
  modern: SecureContextOptions;
  legacy: SecureContextOptions;
  /** Things the operator should know that do not stop the daemon (a CA with a weak key). */
  warnings: string[];
}

const MODERN_LEVEL = 2;

export function loadTlsOptions(settings: TlsSettings): TlsSetup {
  const cert = readPem("certificate", settings.cert);
  const key = readPem("key", settings.key);
  const ca = settings.verify ? readPem("CA certificate", settings.cacert) : undefined;
  checkOwnChain(cert, settings);
  const common: SecureContextOptions = { cert, key, ca, honorCipherOrder: true };
  return {
    verify: settings.verify,
    modern: checkContext(settings, {
      ...common, minVersion: "TLSv1.2", ciphers: `${DEFAULT_CIPHERS}:@SECLEVEL=${MODERN_LEVEL}`,
    }),
    legacy: checkContext(settings, {
      ...common, minVersion: "TLSv1", maxVersion: "TLSv1.1", ciphers: "DEFAULT:@SECLEVEL=0",
    }),
    warnings: ca ? weakAnchors(ca, settings.cacert) : [],
  };
}

/** The certificates of --tlscert (the daemon's, then any intermediates) by level 2's rules. */
function checkOwnChain(pem: Buffer, settings: TlsSettings): void {
  const chain = pemBlocks(pem);
  chain.forEach((c, i) => {
    // The last one may be a self-signed root sent along, whose signature nobody checks.
    const why = certWeakness(c, i === chain.length - 1);
    if (why) throw errors.tlsCertificateRejected(settings.cert, settings.key, `certificate ${oneLine(c.subject)}: ${why}`);
  });
}

/** A CA whose key is too weak makes every client chain that ends at it fail verification. */
function weakAnchors(pem: Buffer, path: string): string[] {
  return pemBlocks(pem).flatMap((c) => {
    const why = certWeakness(c, true);
    return why ? [`TLS CA certificate ${oneLine(c.subject)} in ${path}: ${why}; client certificates it signed will be refused`] : [];
  });
}

/** Makes the context once at start, so that what OpenSSL refuses stops the daemon there. */
function checkContext(settings: TlsSettings, options: SecureContextOptions): SecureContextOptions {
  try {
    createSecureContext(options);
    return options;
  } catch (err) {
    throw errors.tlsCertificateRejected(settings.cert, settings.key, openSslReason(err as Error & { reason?: string }));
  }
}

/** OpenSSL's reasons, in the words of the rules above where it has a terse one. */
function openSslReason(err: Error & { reason?: string }): string {
  const reason = err.reason ?? err.message;
  if (reason === "ee key too small") return `its key is too small: RSA and DSA keys need 2048 bits or more, EC keys 224 bits or more (OpenSSL security level ${MODERN_LEVEL})`;
  if (reason === "ca md too weak") return "it is signed with MD5 or SHA-1; sign it with SHA-256 or stronger";
  if (reason === "key values mismatch") return "the key does not belong to the certificate";
  return reason;
}

function pemBlocks(pem: Buffer): X509Certificate[] {
  const blocks = pem.toString("latin1").match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? [];
  // A block that does not parse is left to OpenSSL, whose error createSecureContext reports.
  return blocks.flatMap((b) => {
    try {
      return [new X509Certificate(b)];
    } catch {
      return [];
    }
  });
}

function oneLine(subject: string): string {
  return subject.replaceAll("\n", ", ");
}

function readPem(what: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw errors.tlsFileUnreadable(what, path, (err as NodeJS.ErrnoException).code ?? (err as Error).message);
  }
}
