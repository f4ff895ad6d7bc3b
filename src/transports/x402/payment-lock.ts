import { randomBytes, randomUUID } from "node:crypto";
import type { PaymentRequirements } from "@x402/core/types";
import { and, eq, lt, sql } from "drizzle-orm";
import type { StoredResponse } from "../../platform/db/claim.ts";
import { type Db, perDatabase } from "../../platform/db/client.ts";
import { x402Payments } from "../../platform/db/schema/x402-payments.ts";
import { derivedKey } from "../../platform/vault/derived-key.ts";
import { decrypt, encrypt } from "../../platform/vault/envelope.ts";
import type { Keyring } from "../../platform/vault/keyring.ts";

/** (network, asset, payer, nonce), lowercase: the scope of an EIP-3009 nonce. */
export type PaymentKey = { network: string; asset: string; payer: string; nonce: string };
export type PaymentRow = typeof x402Payments.$inferSelect;
/** One payment's row, and the keyring that seals its stored answer. */
export type PaymentLock = { db: Db; keyring: Keyring; key: PaymentKey };

/**
 * The payment, held by this request; each method acts only on this claim, never a later one.
 * `settled` and `failed` store the answer with the requirements the payment was verified against.
 */
export type PaymentClaim = {
  settled(transaction: string, response: StoredResponse, requirements: PaymentRequirements): Promise<void>;
  failed(response: StoredResponse, requirements: PaymentRequirements): Promise<void>;
  /**
   * Seals `body` ahead, for `settled` or `failed` with that same body: called while settlement
   * is in flight, so the stored answer's write after it only has the round trip left. Never
   * throws (it runs outside the request); a failure shows in the write.
   */
  prepare(body: string): void;
  /** The handler refused or failed: nothing was charged, nothing is held; the payment is free again. */
  release(): Promise<void>;
};

/** A claim this old belongs to a dead process (far above any handler plus settlement): take it over. */
const STALE_CLAIM_MS = 10 * 60_000;

const where = (key: PaymentKey) =>
  and(
    eq(x402Payments.network, key.network),
    eq(x402Payments.asset, key.asset),
    eq(x402Payments.payer, key.payer),
    eq(x402Payments.nonce, key.nonce),
  );

const p = (name: string) => sql.placeholder(name);
const byKey = and(
  eq(x402Payments.network, p("network")),
  eq(x402Payments.asset, p("asset")),
  eq(x402Payments.payer, p("payer")),
  eq(x402Payments.nonce, p("nonce")),
);

/**
 * A paid call's own statements, prepared once per database handle: every paid call claims and
 * answers its payment's row, and reads it when the claim finds one (bench:x402,
 * docs/performance.md).
 *
 * Both commits wait for their WAL flush. A claim flushed later would be lost by a database crash
 * while this process lives on: the handler would go on against the recovered database, and a copy
 * of the payment, finding no row, would run it a second time (docs/performance.md).
 */
const statements = perDatabase((db: Db) => ({
  find: db.select().from(x402Payments).where(byKey).prepare("x402_payment_find"),
  claim: db
    .insert(x402Payments)
    .values({
      network: p("network"),
      asset: p("asset"),
      payer: p("payer"),
      nonce: p("nonce"),
      paymentHash: p("paymentHash"),
      requestHash: p("requestHash"),
      route: p("route"),
      amount: p("amount"),
      state: "in_flight",
      claimId: p("claimId"),
      claimedAt: p("claimedAt"),
      expiresAt: p("expiresAt"),
    })
    .onConflictDoNothing()
    .returning({ claimId: x402Payments.claimId })
    .prepare("x402_payment_claim"),
  answer: db
    .update(x402Payments)
    .set({
      state: sql`${p("state")}::text`,
      transaction: sql`coalesce(${p("transaction")}::text, ${x402Payments.transaction})`,
      responseStatus: sql`${p("responseStatus")}::integer`,
      responseHeaders: sql`${p("responseHeaders")}::jsonb`,
      responseBody: sql`${p("responseBody")}::text`,
      requirements: sql`${p("requirements")}::jsonb`,
    })
    .where(and(byKey, eq(x402Payments.state, "in_flight"), eq(x402Payments.claimId, p("claimId"))))
    .prepare("x402_payment_answer"),
}));

export async function findPayment({ db, key }: PaymentLock): Promise<PaymentRow | undefined> {
  const [row] = await statements(db).find.execute(key);
  return row;
}

/**
 * Inserts an `in_flight` row; undefined when the key already has one. Taken while the payment is
 * verified: its requirements are stored with the answer.
 */
export async function claimPayment(
  lock: PaymentLock,
  fields: ClaimFields,
  now: Date,
): Promise<PaymentClaim | undefined> {
  const claimId = randomUUID();
  const inserted = await statements(lock.db).claim.execute({
    ...lock.key,
    ...fields,
    claimId,
    claimedAt: now,
  });
  return inserted.length > 0 ? claimed(lock, claimId) : undefined;
}

/** What a claim records of its payment and request. */
export type ClaimFields = {
  paymentHash: string;
  requestHash: string;
  route: string;
  amount: string;
  expiresAt: Date;
};

/**
 * Moves `row` back to `in_flight` under a new claim id (a held payment settled again, or an
 * abandoned claim taken over, then with the verified payment's `fields`); conditional on its
 * current claim id, so exactly one contender wins.
 */
export async function reclaimPayment(
  lock: PaymentLock,
  row: PaymentRow,
  now: Date,
  fields?: ClaimFields,
): Promise<PaymentClaim | undefined> {
  const claimId = randomUUID();
  const updated = await lock.db
    .update(x402Payments)
    .set({ ...fields, state: "in_flight", claimId, claimedAt: now })
    .where(and(where(lock.key), eq(x402Payments.state, row.state), eq(x402Payments.claimId, row.claimId)))
    .returning({ claimId: x402Payments.claimId });
  return updated.length > 0 ? claimed(lock, claimId) : undefined;
}

function claimed({ db, keyring, key }: PaymentLock, claimId: string): PaymentClaim {
  const mine = and(where(key), eq(x402Payments.state, "in_flight"), eq(x402Payments.claimId, claimId));
  let prepared: { body: string; sealed: string } | undefined;
  const seal = (body: string) =>
    prepared?.body === body ? prepared.sealed : sealReplayBody(keyring, key, body);
  const answered = async (
    state: "settled" | "failed",
    response: StoredResponse,
    requirements: PaymentRequirements,
    transaction?: string,
  ) => {
    await statements(db).answer.execute({
      ...key,
      claimId,
      state,
      transaction: transaction ?? null,
      responseStatus: response.status,
      responseHeaders: JSON.stringify(response.headers),
      responseBody: seal(response.body),
      requirements: JSON.stringify(requirements),
    });
  };
  return {
    settled: (transaction, response, requirements) =>
      answered("settled", response, requirements, transaction),
    failed: (response, requirements) => answered("failed", response, requirements),
    prepare: (body) => {
      try {
        prepared = { body, sealed: seal(body) };
      } catch {
        // Never thrown here, outside any request: the write seals again and fails with the call.
      }
    },
    release: async () => {
      await db.delete(x402Payments).where(mine);
    },
  };
}

export const isStaleClaim = (row: PaymentRow, now: Date): boolean =>
  row.state === "in_flight" && row.claimedAt.getTime() <= now.getTime() - STALE_CLAIM_MS;

export function storedResponse(row: PaymentRow, keyring: Keyring): StoredResponse {
  return {
    status: row.responseStatus ?? 200,
    headers: row.responseHeaders ?? {},
    body: row.responseBody ? openReplayBody(keyring, row, row.responseBody) : "",
  };
}

/** Deletes rows whose authorization expired a day ago (their nonce can never settle again). */
export async function sweepX402Payments(db: Db, now: Date): Promise<number> {
  const deleted = await db
    .delete(x402Payments)
    .where(lt(x402Payments.expiresAt, now))
    .returning({ nonce: x402Payments.nonce });
  return deleted.length;
}

/**
 * Stored answers may carry what is shown once (a session token, a publishable key): sealed with
 * AES-256-GCM under a KEK-derived key, bound to the lock key so a body cannot move to another row.
 */
const PREFIX = "sealed:";

function sealReplayBody(keyring: Keyring, key: PaymentKey, body: string): string {
  const version = keyring.activeVersion;
  const dataKey = derivedKey(keyring, "x402/replay", version);
  if (!dataKey) throw new Error("the active KEK is missing from the keyring");
  const iv = randomBytes(12);
  const sealed = encrypt(dataKey, iv, Buffer.from(body, "utf8"), aad(key, version));
  return `${PREFIX}${version}:${iv.toString("base64url")}:${sealed.toString("base64url")}`;
}

/** The stored body in clear. Rows written before sealing existed are returned as they are. */
function openReplayBody(keyring: Keyring, key: PaymentKey, stored: string): string {
  if (!stored.startsWith(PREFIX)) return stored;
  const [versionText = "", iv = "", sealed = ""] = stored.slice(PREFIX.length).split(":");
  const version = Number(versionText);
  const dataKey = derivedKey(keyring, "x402/replay", version);
  if (!dataKey) throw new Error(`the keyring no longer holds KEK v${version} for a stored x402 answer`);
  const bytes = (text: string) => Buffer.from(text, "base64url");
  return decrypt(dataKey, bytes(iv), bytes(sealed), aad(key, version)).toString("utf8");
}

const aad = (key: PaymentKey, version: number) =>
  Buffer.from(
    JSON.stringify(["patchbay/x402/replay", version, key.network, key.asset, key.payer, key.nonce]),
  );
