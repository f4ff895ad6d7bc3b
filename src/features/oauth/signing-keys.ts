import { createPrivateKey, type JsonWebKey } from "node:crypto";
import { derivedKey } from "../../platform/vault/derived-key.ts";
import type { Keyring } from "../../platform/vault/keyring.ts";

/** PKCS#8 DER prefix of an Ed25519 private key: the 32-byte seed follows. */
const ED25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/**
 * The authorization server's signing keys (JWKS), derived rather than stored: an Ed25519 seed is
 * HKDF(KEK v<N>, "oauth/signing-key"), so every instance holding the same `PATCHBAY_KEK` signs
 * with the same key, nothing secret sits in the database, and a KEK rotation rotates it. Every
 * version still in the keyring is published (newest first, which is the one that signs), so
 * whatever was signed before the rotation still verifies.
 *
 * patchbay's access tokens are opaque (looked up in the database), so these keys sign only ID
 * tokens, which a client gets if it asks for the `openid` scope.
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

/**
 * Keys for the provider's signed cookies (interaction and its own session), derived the same way:
 * the active version signs, older ones still verify.
 */
export function cookieKeys(keyring: Keyring): string[] {
  return keyring.versions.flatMap((version) => {
    const key = derivedKey(keyring, "oauth/cookies", version);
    return key ? [key.toString("base64url")] : [];
  });
}
