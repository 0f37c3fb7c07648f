/**
 * The certificate rules of OpenSSL's security level 2 (112-bit security), written out so that
 * they can be applied where OpenSSL does not apply them: on the client chains of TLS 1.0 and
 * 1.1 connections, which OpenSSL 3 negotiates only at level 0 (see tls-server.ts), and on the
 * daemon's own certificate at start, whose signature OpenSSL does not check when it loads it.
 *
 * - RSA and DSA keys of 2048 bits or more, EC keys on curves of 224 bits or more; EdDSA and
 *   the post-quantum ML-DSA and SLH-DSA keys are strong enough; any other key type is refused.
 * - No certificate signed with MD2, MD4, MD5 or SHA-1, except a self-signed trust anchor, whose
 *   signature nobody relies on (OpenSSL skips it too).
 */
import { X509Certificate } from "node:crypto";
import type { DetailedPeerCertificate } from "node:tls";

const MIN_RSA_DSA_BITS = 2048;
const MIN_EC_BITS = 224;
const STRONG_TYPES = /^(ed25519|ed448|ml-dsa|slh-dsa)/;
const WEAK_HASH = /(^|[^a-z0-9])(md2|md4|md5|sha1|sha-1)([^0-9]|$)/i;
/** OIDs of the MD5 and SHA-1 signature algorithms, for names OpenSSL may print differently. */
const WEAK_SIGNATURE_OIDS = new Set([
  "1.2.840.113549.1.1.2", "1.2.840.113549.1.1.3", "1.2.840.113549.1.1.4", "1.2.840.113549.1.1.5",
  "1.2.840.10045.4.1", "1.2.840.10040.4.3", "1.3.14.3.2.3", "1.3.14.3.2.27", "1.3.14.3.2.29",
]);

/** Why this certificate is too weak, or undefined when it is not. */
export function certWeakness(cert: X509Certificate, trustAnchor: boolean): string | undefined {
  const keyWeakness = keyWeaknessOf(cert);
  if (keyWeakness) return keyWeakness;
  if (trustAnchor && cert.checkIssued(cert)) return undefined;
  const algorithm = cert.signatureAlgorithm ?? "";
  if (WEAK_HASH.test(algorithm) || WEAK_SIGNATURE_OIDS.has(cert.signatureAlgorithmOid ?? "")) {
    return `it is signed with ${algorithm || cert.signatureAlgorithmOid}; MD5 and SHA-1 signatures are refused`;
  }
  return undefined;
}

function keyWeaknessOf(cert: X509Certificate): string | undefined {
  const key = cert.publicKey;
  const type = key.asymmetricKeyType ?? "unknown";
  const details = key.asymmetricKeyDetails ?? {};
  if (type === "rsa" || type === "rsa-pss" || type === "dsa") {
    const bits = details.modulusLength ?? 0;
    if (bits < MIN_RSA_DSA_BITS) return `it has a ${bits}-bit ${type.toUpperCase()} key; ${MIN_RSA_DSA_BITS} bits or more are required`;
    return undefined;
  }
  if (type === "ec") {
    const curve = details.namedCurve ?? "unknown";
    const bits = curveBits(curve);
    if (bits < MIN_EC_BITS) return `it has an EC key on ${curve}; curves of ${MIN_EC_BITS} bits or more are required`;
    return undefined;
  }
  if (STRONG_TYPES.test(type)) return undefined;
  return `it has a ${type} key, not one of RSA, DSA, EC, EdDSA, ML-DSA or SLH-DSA`;
}

/** OpenSSL's curve names carry their size: prime256v1, secp384r1, brainpoolP512r1, sect163k1. */
function curveBits(curve: string): number {
  const m = /(\d{3})/.exec(curve);
  return m ? Number(m[1]) : 0;
}

/**
 * The first weakness in a verified peer chain (`getPeerCertificate(true)`: the certificates the
 * client sent, then its issuers up to the trust anchor, which is its own issuer), naming the
 * certificate's subject.
 */
export function chainWeakness(leaf: DetailedPeerCertificate): string | undefined {
  let cert: DetailedPeerCertificate | undefined = leaf;
  for (let depth = 0; cert?.raw && depth < MAX_CHAIN; depth++) {
    const issuer: DetailedPeerCertificate | undefined = cert.issuerCertificate;
    const anchor = !issuer || issuer === cert || issuer.raw === undefined;
    const x509 = new X509Certificate(cert.raw);
    const why = certWeakness(x509, anchor);
    if (why) return `certificate ${x509.subject.replaceAll("\n", ", ")}: ${why}`;
    if (anchor) return undefined;
    cert = issuer;
  }
  return cert?.raw ? "the certificate chain is longer than this check follows" : "no client certificate";
}

/** OpenSSL's default verify depth is 100; real chains are 2 to 4 long. */
const MAX_CHAIN = 100;
