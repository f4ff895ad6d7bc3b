import { randomBytes } from "node:crypto";
import { and, eq } from "drizzle-orm";
import type { Db } from "../../platform/db/client.ts";
import { type WebhookEndpointRow, webhookEndpoints } from "../../platform/db/schema/webhooks.ts";
import { openSecret, rewrapSecret, type SecretBinding, sealSecret } from "../../platform/vault/envelope.ts";
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

const sealedOf = (row: WebhookEndpointRow) => ({
  kekVersion: row.secretKekVersion,
  wrappedKey: row.secretWrappedKey,
  wrapIv: row.secretWrapIv,
  iv: row.secretIv,
  ciphertext: row.secretCiphertext,
});

export function openSigningSecret(keyring: Keyring, row: WebhookEndpointRow): string {
  return openSecret({ keyring, sealed: sealedOf(row), aad: bindingOf(row, row.secretVersion) });
}

/**
 * KEK rotation for webhook signing secrets (`patchbay admin rotate-kek`, after the credentials):
 * each endpoint's data key is re-wrapped under the active KEK version, the secret itself
 * untouched. A compare-and-swap on the wrapped key read, so a rotation of the secret meanwhile
 * wins. Endpoints whose secret does not open are left as they are and counted in `failed`.
 */
export async function rewrapWebhookSecrets(
  db: Db,
  keyring: Keyring,
): Promise<{ rewrapped: number; alreadyCurrent: number; failed: string[] }> {
  const rows = await db.select().from(webhookEndpoints);
  let rewrapped = 0;
  let alreadyCurrent = 0;
  const failed: string[] = [];
  for (const row of rows) {
    if (row.secretKekVersion === keyring.activeVersion) {
      alreadyCurrent += 1;
      continue;
    }
    let sealed: ReturnType<typeof rewrapSecret>;
    try {
      sealed = rewrapSecret({ keyring, sealed: sealedOf(row), aad: bindingOf(row, row.secretVersion) });
    } catch {
      failed.push(row.id);
      continue;
    }
    const updated = await db
      .update(webhookEndpoints)
      .set({
        secretKekVersion: sealed.kekVersion,
        secretWrappedKey: sealed.wrappedKey,
        secretWrapIv: sealed.wrapIv,
      })
      .where(
        and(eq(webhookEndpoints.id, row.id), eq(webhookEndpoints.secretWrappedKey, row.secretWrappedKey)),
      )
      .returning({ id: webhookEndpoints.id });
    if (updated.length > 0) rewrapped += 1;
  }
  return { rewrapped, alreadyCurrent, failed };
}
