import { and, asc, count, eq, gt, lt, type SQL, sql } from "drizzle-orm";
import { AppError } from "../../errors.ts";
import type { Db } from "../db/client.ts";
import { vaultSecrets } from "../db/schema/secrets.ts";
import { bindingOf } from "./credential-store.ts";
import { rewrapSecret, type SealedSecret } from "./envelope.ts";
import type { Keyring } from "./keyring.ts";

export type RewrapResult = {
  /** Rows this run moved to the active KEK version. */
  rewrapped: number;
  /** Rows already under the active version when the run began. */
  alreadyCurrent: number;
};

const DEFAULT_BATCH = 100;
const LISTED_FAILURES = 10;

/**
 * Re-wraps every credential's data key under the keyring's active KEK version (`iv` and
 * `ciphertext` stay as they are). One pass in id order, in batches. Each row is written only
 * if it still holds the id, KEK version and wrapped key that were read, so concurrent runs —
 * or a credential replaced meanwhile — never clash: a lost race is simply not counted.
 *
 * Run it once every instance holds the new keyring (rows stored meanwhile by an instance
 * with the old one may be missed). Refuses a keyring older than the newest version in use,
 * which would strand rows it cannot open. Rows that do not open (corrupt, or their version
 * already dropped) are left alone and reported by id after the rest are done.
 */
export async function rewrapAllCredentials(
  db: Db,
  keyring: Keyring,
  options: { batchSize?: number } = {},
): Promise<RewrapResult> {
  const active = keyring.activeVersion;
  const batchSize = options.batchSize ?? DEFAULT_BATCH;
  const newer = await countWhere(db, gt(vaultSecrets.kekVersion, active));
  if (newer > 0) {
    throw new AppError(
      "internal",
      `${newer} credential(s) are wrapped under a KEK version newer than v${active}: this keyring is out of date.`,
    );
  }
  const alreadyCurrent = await countWhere(db, eq(vaultSecrets.kekVersion, active));

  let rewrapped = 0;
  const failed: string[] = [];
  let after = "";
  for (;;) {
    const batch = await db
      .select()
      .from(vaultSecrets)
      .where(and(lt(vaultSecrets.kekVersion, active), gt(vaultSecrets.id, after)))
      .orderBy(asc(vaultSecrets.id))
      .limit(batchSize);
    for (const row of batch) {
      const sealed = rewrapRow(keyring, row);
      if (!sealed) failed.push(row.id);
      else if (await writeIfUnchanged(db, row, sealed)) rewrapped += 1;
    }
    const last = batch.at(-1);
    if (!last || batch.length < batchSize) break;
    after = last.id;
  }

  if (failed.length > 0) {
    const listed = failed.slice(0, LISTED_FAILURES).join(", ");
    throw new AppError(
      "internal",
      `Re-wrapped ${rewrapped} credential(s), but ${failed.length} could not be decrypted and stay under ` +
        `their old KEK version (${listed}${failed.length > LISTED_FAILURES ? ", …" : ""}). ` +
        "Keep the old versions in the keyring until these are replaced or deleted.",
      { rewrapped, alreadyCurrent, failed },
    );
  }
  return { rewrapped, alreadyCurrent };
}

type Row = typeof vaultSecrets.$inferSelect;

function rewrapRow(keyring: Keyring, row: Row): SealedSecret | undefined {
  try {
    // The row's own scope: rotation is an operator act over every tenant.
    return rewrapSecret({ keyring, sealed: row, aad: bindingOf(row, row.credentialVersion) });
  } catch {
    return undefined; // the vault's generic failure; the caller reports the row id
  }
}

/** Compare-and-swap on what was read: the wrapped key is unique per seal, so it pins the exact secret. */
async function writeIfUnchanged(db: Db, row: Row, sealed: SealedSecret): Promise<boolean> {
  const updated = await db
    .update(vaultSecrets)
    .set({
      kekVersion: sealed.kekVersion,
      wrappedKey: sealed.wrappedKey,
      wrapIv: sealed.wrapIv,
      rewrappedAt: sql`now()`,
    })
    .where(
      and(
        eq(vaultSecrets.id, row.id),
        eq(vaultSecrets.kekVersion, row.kekVersion),
        eq(vaultSecrets.wrappedKey, row.wrappedKey),
      ),
    )
    .returning({ id: vaultSecrets.id });
  return updated.length > 0;
}

async function countWhere(db: Db, where: SQL): Promise<number> {
  const [result] = await db.select({ n: count() }).from(vaultSecrets).where(where);
  return result?.n ?? 0;
}
