import { createHash } from "node:crypto";
import { and, eq, lt } from "drizzle-orm";
import type { ServiceContext } from "../../context.ts";
import { AppError } from "../../errors.ts";
import type { Db } from "./client.ts";
import { idempotencyKeys } from "./schema/idempotency-keys.ts";

const POLL_MS = 25;

/**
 * A key claimed through one database row, so that of all callers of all instances exactly one
 * runs the work and the others get its stored answer: Idempotency-Key (below, for REST and MCP)
 * and the x402 payment lock (transports/x402/payment-lock.ts) are two tables behind it.
 */
export type ClaimTable<Row, Claim, Answer> = {
  /** How long a caller waits for another's claim before `inFlight()`, by `clock`. */
  waitMs: number;
  clock: () => Date;
  read(): Promise<Row | undefined>;
  /**
   * What the key's row means to this caller: its stored answer, a live claim to wait for, or a
   * key to take (abandoned or expired). Throws when the key belongs to another request.
   */
  judge(row: Row, now: Date): { replay: Answer } | "wait" | "take";
  /**
   * Inserts a claim when `row` is undefined, else takes `row` over on a condition only one
   * contender can meet; undefined when another caller won.
   */
  take(row: Row | undefined, now: Date): Promise<Claim | undefined>;
  inFlight(): AppError;
  /** Insert before reading: one query when keys are usually new. */
  takeFirst?: boolean;
};

/** Claims the key for this caller or returns the stored answer, waiting while another holds it. */
export async function claimOrReplay<Row, Claim, Answer>(
  table: ClaimTable<Row, Claim, Answer>,
): Promise<{ claim: Claim } | { replay: Answer }> {
  const deadline = table.clock().getTime() + table.waitMs;
  let row = table.takeFirst ? undefined : await table.read();
  for (;;) {
    const now = table.clock();
    const seen = row ? table.judge(row, now) : "take";
    if (seen === "take") {
      const claim = await table.take(row, now);
      if (claim !== undefined) return { claim };
    } else if (seen !== "wait") {
      return seen;
    } else {
      if (now.getTime() > deadline) throw table.inFlight();
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    row = await table.read();
  }
}

/** Runs `work` under a claim; when it throws nothing was stored, so the claim is given back. */
export async function releasingOnThrow<T>(
  release: (error: unknown) => Promise<void>,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    await release(error);
    throw error;
  }
}

const KEY_TTL_MS = 24 * 60 * 60 * 1000;
/** A claim older than this is an abandoned request (process died); the key may be taken over. */
const STALE_CLAIM_MS = 60_000;
/**
 * How long a duplicate waits for the first request before answering `idempotency_in_flight`:
 * long enough for an ordinary request to finish and be replayed, short enough that the answer
 * comes within the service's few-second bound — a first request cut off by a database outage
 * leaves its claim behind (it could not release it) until the claim goes stale.
 */
const WAIT_FOR_FIRST_MS = 4_000;
/** 1–255 visible ASCII characters (REST's Idempotency-Key header, MCP's `idempotencyKey`). */
export const idempotencyKeyPattern = /^[\x21-\x7e]{1,255}$/;

/**
 * One Idempotency-Key of one organisation (DESIGN §5), kept 24 h. `caller` (the credential's
 * type and id) is part of what makes a request the same one: a stored answer is replayed before
 * the route's or tool's own permission checks run, so it may only ever go back to the credential
 * that was given it; anyone else reusing (or guessing) the key gets `idempotency_key_reused`.
 */
export type IdempotencyScope = { db: Db; organizationId: string; key: string; caller: string };

/** The scope of `key` for the caller of `ctx`, as every transport builds it. */
export const idempotencyScope = (ctx: ServiceContext, key: string): IdempotencyScope => ({
  db: ctx.deps.db,
  organizationId: ctx.actor.organizationId,
  key,
  caller: `${ctx.actor.type}:${ctx.actor.id}`,
});

/** What a completed key replays. HTTP stores its response; MCP stores its tool result. */
export type StoredResponse = { status: number; headers: Record<string, string>; body: string };

/**
 * The key, held by this caller: store the successful answer, or give the key back (nothing
 * changed, so the caller may fix the request and retry with it). Both act only on this claim,
 * never on one that took over after it went stale.
 */
export type IdempotencyClaim = {
  complete(response: StoredResponse): Promise<void>;
  release(): Promise<void>;
};

/**
 * Claims the key for the request `requestHash` identifies (in the caller's own namespace: HTTP
 * and MCP hash differently, so one key never means two changes). Same request completed → its
 * stored answer; another request → `idempotency_key_reused`; still running past the wait →
 * `idempotency_in_flight`.
 */
export async function claimIdempotencyKey(
  scope: IdempotencyScope,
  requestHash: string,
  clock: () => Date,
): Promise<{ claim: IdempotencyClaim } | { replay: StoredResponse }> {
  const identity = createHash("sha256").update(`${scope.caller}\n${requestHash}`).digest("hex");
  const whereKey = and(
    eq(idempotencyKeys.organizationId, scope.organizationId),
    eq(idempotencyKeys.key, scope.key),
  );
  const claim = (claimedAt: Date): IdempotencyClaim => {
    const mine = and(
      whereKey,
      eq(idempotencyKeys.state, "in_flight"),
      eq(idempotencyKeys.createdAt, claimedAt),
    );
    return {
      complete: async ({ status, headers, body }) => {
        await scope.db
          .update(idempotencyKeys)
          .set({ state: "completed", responseStatus: status, responseHeaders: headers, responseBody: body })
          .where(mine);
      },
      release: async () => {
        await scope.db.delete(idempotencyKeys).where(mine);
      },
    };
  };
  return claimOrReplay({
    waitMs: WAIT_FOR_FIRST_MS,
    clock,
    takeFirst: true,
    read: async () => (await scope.db.select().from(idempotencyKeys).where(whereKey))[0],
    judge: (row, now) => {
      if (
        row.expiresAt < now ||
        (row.state === "in_flight" && row.createdAt.getTime() < now.getTime() - STALE_CLAIM_MS)
      )
        return "take";
      if (row.requestHash !== identity) {
        throw new AppError(
          "idempotency_key_reused",
          "This Idempotency-Key was already used for a different request; use a new key for a new request.",
        );
      }
      if (row.state === "in_flight") return "wait";
      return {
        replay: {
          status: row.responseStatus ?? 200,
          headers: row.responseHeaders ?? {},
          body: row.responseBody ?? "",
        },
      };
    },
    take: async (row, now) => {
      const values = {
        requestHash: identity,
        state: "in_flight" as const,
        createdAt: now,
        expiresAt: new Date(now.getTime() + KEY_TTL_MS),
      };
      // An expired record or an abandoned claim is taken over on the condition that it is still
      // the row read: of several contenders exactly one wins.
      const won = row
        ? await scope.db
            .update(idempotencyKeys)
            .set({ ...values, responseStatus: null, responseHeaders: null, responseBody: null })
            .where(
              and(
                whereKey,
                eq(idempotencyKeys.state, row.state),
                eq(idempotencyKeys.createdAt, row.createdAt),
              ),
            )
            .returning({ key: idempotencyKeys.key })
        : await scope.db
            .insert(idempotencyKeys)
            .values({ organizationId: scope.organizationId, key: scope.key, ...values })
            .onConflictDoNothing()
            .returning({ key: idempotencyKeys.key });
      return won.length > 0 ? claim(now) : undefined;
    },
    inFlight: () =>
      new AppError(
        "idempotency_in_flight",
        "A request with this Idempotency-Key is still being processed; retry shortly.",
      ),
  });
}

/** Deletes expired records; run periodically. */
export async function sweepIdempotencyKeys(db: Db, now: Date): Promise<number> {
  const deleted = await db
    .delete(idempotencyKeys)
    .where(lt(idempotencyKeys.expiresAt, now))
    .returning({ key: idempotencyKeys.key });
  return deleted.length;
}
