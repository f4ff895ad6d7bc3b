import { newId, randomToken } from "../../ids.ts";
import { hashApiKeySecret } from "../api-keys/index.ts";

/** Key ids: `pbk_…`, so an id is never mistaken for the key itself (`pk_…`). */
export const newPublishableKeyId = (): string => newId("pbk");

/**
 * `pk_` + 192 random bits. Publishable keys are meant to ship inside applications, so the
 * randomness is not what keeps them safe (their reach is: ingest into one environment); it makes
 * them unguessable, and a plain SHA-256 is then a sound lookup hash.
 */
export function generatePublishableKey(): { key: string; prefix: string; hash: string } {
  const key = `pk_${randomToken(24)}`;
  return { key, prefix: key.slice(0, 11), hash: hashPublishableKey(key) };
}

/** The same SHA-256 lookup hash as secret keys: both are 192 random bits. */
export const hashPublishableKey: (key: string) => string = hashApiKeySecret;
