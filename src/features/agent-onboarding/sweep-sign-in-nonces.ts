import { lt } from "drizzle-orm";
import type { Db } from "../../platform/db/client.ts";
import { siwxNonces } from "../../platform/db/schema/siwx-nonces.ts";

/**
 * Deletes challenges past their expiry: they can never sign anyone in again. Apart from
 * wallet-sign-in.ts so that the hourly sweep does not load the sign-in-with-x verifier at start.
 */
export async function sweepSignInNonces(db: Db, now: Date): Promise<number> {
  const deleted = await db
    .delete(siwxNonces)
    .where(lt(siwxNonces.expiresAt, now))
    .returning({ nonce: siwxNonces.nonce });
  return deleted.length;
}
