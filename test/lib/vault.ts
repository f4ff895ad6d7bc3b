import { inspect } from "node:util";
import { expect } from "vitest";
import { AppError } from "../../src/errors.ts";
import { openSecret, type SecretBinding } from "../../src/platform/vault/envelope.ts";

// Shared by the vault's tests; not part of the vault's API.

export const binding: SecretBinding = {
  organizationId: "org_1",
  environmentId: "env_1",
  connectionId: "con_1",
  credentialVersion: 1,
};
export const secret = "sk_live_PLAINTEXT_SENTINEL_0123456789";

/** Opens and returns the thrown error (or fails the test if it opened). */
export function openFailure(args: Parameters<typeof openSecret>[0]): AppError {
  try {
    openSecret(args);
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("expected the secret not to open");
}

/** The one failure every open/rewrap problem must look like. */
export function expectGenericFailure(error: AppError): void {
  expect(error.code).toBe("internal");
  expect(error.message).toBe("secret could not be decrypted");
  expect(error.details).toBeUndefined();
  expect(error.cause).toBeUndefined();
  expect(`${inspect(error)} ${JSON.stringify(error)}`).not.toContain(secret);
}
