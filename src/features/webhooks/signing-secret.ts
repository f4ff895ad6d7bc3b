import { randomBytes } from "node:crypto";
import type { WebhookEndpointRow } from "../../platform/db/schema/webhooks.ts";
import { openSecret, type SecretBinding, sealSecret } from "../../platform/vault/envelope.ts";
import type { Keyring } from "../../platform/vault/keyring.ts";

/** A Standard Webhooks secret: `whsec_` + base64 of 32 random bytes (the spec allows 24–64). */
export const generateSigningSecret = (): string => `whsec_${randomBytes(32).toString("base64")}`;

/**
 * The vault binding of an endpoint's secret: the organisation, a fixed scope in place of an
 * environment (endpoints belong to the organisation), the endpoint and the secret's version. A
 * sealed secret copied onto another endpoint, or an older version put back, does not open.
 */
const bindingOf = (row: { organizationId: string; id: string }, version: number): SecretBinding => ({
  organizationId: row.organizationId,
  environmentId: "webhook-endpoint",
  connectionId: row.id,
  credentialVersion: version,
});

export function sealSigningSecret(
  keyring: Keyring,
  endpoint: { organizationId: string; id: string },
  version: number,
  secret: string,
) {
  const sealed = sealSecret({ keyring, plaintext: secret, aad: bindingOf(endpoint, version) });
  return {
    secretVersion: version,
    secretKekVersion: sealed.kekVersion,
    secretWrappedKey: sealed.wrappedKey,
    secretWrapIv: sealed.wrapIv,
    secretIv: sealed.iv,
    secretCiphertext: sealed.ciphertext,
  };
}

export function openSigningSecret(keyring: Keyring, row: WebhookEndpointRow): string {
  return openSecret({
    keyring,
    sealed: {
      kekVersion: row.secretKekVersion,
      wrappedKey: row.secretWrappedKey,
      wrapIv: row.secretWrapIv,
      iv: row.secretIv,
      ciphertext: row.secretCiphertext,
    },
    aad: bindingOf(row, row.secretVersion),
  });
}
