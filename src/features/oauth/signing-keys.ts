import { createPrivateKey, type JsonWebKey } from "node:crypto";
import { derivedKey } from "../../platform/vault/derived-key.ts";
import type { Keyring } from "../../platform/vault/keyring.ts";

/** PKCS#8 DER prefix of an Ed25519 private key: the 32-byte seed follows. */
const ED25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/**
 * The signing keys (JWKS), derived rather than stored: Ed25519 seeds HKDF(KEK v<N>,
 * "oauth/signing-key"), one per keyring version, newest (the signer) first, so a KEK rotation
 * rotates them and old signatures still verify. Access tokens are opaque: these sign ID tokens.
 */
export function signingKeys(keyring: Keyring): JsonWebKey[] {
  const keys: JsonWebKey[] = [];
  for (const version of keyring.versions) {
    const seed = derivedKey(keyring, "oauth/signing-key", version);
    if (!seed) continue;
    const jwk = createPrivateKey({
      key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]),
      format: "der",
      type: "pkcs8",
    }).export({ format: "jwk" });
    keys.push({ ...jwk, kid: `patchbay-v${version}`, alg: "EdDSA", use: "sig" });
  }
  return keys;
}

/** Keys for the provider's signed cookies, derived the same way. */
export function cookieKeys(keyring: Keyring): string[] {
  return keyring.versions.flatMap((version) => {
    const key = derivedKey(keyring, "oauth/cookies", version);
    return key ? [key.toString("base64url")] : [];
  });
}
