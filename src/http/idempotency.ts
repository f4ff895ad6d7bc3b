import { createHash } from "node:crypto";
import { and, eq, lt, or } from "drizzle-orm";
import type { Context, MiddlewareHandler } from "hono";
import type { ServiceContext } from "../context.ts";
import type { Db } from "../db/client.ts";
import { idempotencyKeys } from "../db/schema/idempotency-keys.ts";
import { AppError } from "../errors.ts";
import type { AppEnv } from "./env.ts";

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
const POLL_MS = 25;
/** 1–255 visible ASCII characters (also the MCP tools' `idempotencyKey`). */
export const idempotencyKeyPattern = /^[\x21-\x7e]{1,255}$/;
/** Headers worth replaying; everything else is regenerated per response. */
const replayedHeaders = ["content-type", "etag", "location"];

type Row = typeof idempotencyKeys.$inferSelect;

/**
 * Idempotency-Key handling (DESIGN §5), scoped to (organisation, key), kept 24 h.
 *
 * - same key + same request → the stored response, with `Idempotency-Replayed: true`;
 * - same key + a different request → 422 `idempotency_key_reused`;
 * - same key while the first is still running → wait for it, then replay; past the wait,
 *   409 `idempotency_in_flight`.
 *
 * Only 2xx responses are stored. A 4xx means nothing changed, so the key is released and the
 * caller may fix the request and retry with the same key; a 5xx may have been transient.
 * Must run after `authenticate` (it needs the organisation).
 */
export const idempotent = (): MiddlewareHandler<AppEnv> => async (c, next) => {
  const key = c.req.header("idempotency-key");
  if (key === undefined || key === "") {
    throw new AppError(
      "idempotency_key_required",
      "This request needs an Idempotency-Key header (any unique string, e.g. a UUID).",
    );
  }
  if (!idempotencyKeyPattern.test(key)) {
    throw new AppError("invalid_request", "Idempotency-Key must be 1–255 visible ASCII characters.", {
      header: "Idempotency-Key",
    });
  }
  const ctx = c.get("ctx");
  const scope = idempotencyScope(ctx, key);
  const stored = await claimIdempotencyKey(scope, await hashRequest(c), ctx.deps.clock);
  if (stored) return replay(stored);

  c.set("ctx", { ...ctx, idempotencyKey: key });
  try {
    await next();
  } catch (error) {
    await releaseIdempotencyKey(scope);
    throw error;
  }
  const res = c.res;
  if (res.status < 200 || res.status >= 300) {
    await releaseIdempotencyKey(scope);
    return;
  }
  const body = await res.clone().text();
  const headers: Record<string, string> = {};
  for (const name of replayedHeaders) {
    const value = res.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  await completeIdempotencyKey(scope, { status: res.status, headers, body });
};

/**
 * One key of one organisation: the unit the store locks, completes and releases. `caller` (the
 * credential's type and id) is part of what makes a request the same one: a stored response is
 * replayed before the route's or tool's own permission and role checks run, so it may only ever
 * go back to the credential that was given it. Another caller of the organisation who reuses (or
 * guesses) the key gets `idempotency_key_reused`, never someone else's answer.
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
 * Claims the key for a request identified by `requestHash` (a hash of everything that makes
 * it this request, in the caller's own namespace). Returns null when the caller now owns the
 * key and must run, then `completeIdempotencyKey` or `releaseIdempotencyKey`; returns the
 * stored response when the same request already completed. Throws `idempotency_key_reused`
 * for a different request, `idempotency_in_flight` when the first is still running past the
 * wait. Transport-agnostic: the HTTP middleware above and the MCP tools both call it.
 */
export async function claimIdempotencyKey(
  scope: IdempotencyScope,
  requestHash: string,
  clock: () => Date,
): Promise<StoredResponse | null> {
  const identity = createHash("sha256").update(`${scope.caller}\n${requestHash}`).digest("hex");
  const deadline = Date.now() + WAIT_FOR_FIRST_MS;
  for (;;) {
    if (await claim(scope, identity, clock())) return null;
    const [row] = await scope.db.select().from(idempotencyKeys).where(whereKey(scope));
    if (!row) continue; // the first request failed and released the key: try to claim it again
    if (row.requestHash !== identity) {
      throw new AppError(
        "idempotency_key_reused",
        "This Idempotency-Key was already used for a different request; use a new key for a new request.",
      );
    }
    if (row.state === "completed") return stored(row);
    if (Date.now() > deadline) {
      throw new AppError(
        "idempotency_in_flight",
        "A request with this Idempotency-Key is still being processed; retry shortly.",
      );
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Stores the successful outcome for replay. Only successes are stored (see above). */
export async function completeIdempotencyKey(
  scope: IdempotencyScope,
  response: StoredResponse,
): Promise<void> {
  await scope.db
    .update(idempotencyKeys)
    .set({
      state: "completed",
      responseStatus: response.status,
      responseHeaders: response.headers,
      responseBody: response.body,
    })
    .where(whereKey(scope));
}

/** Gives the key back after a failure: nothing changed, so the caller may retry with it. */
export async function releaseIdempotencyKey(scope: IdempotencyScope): Promise<void> {
  await scope.db.delete(idempotencyKeys).where(and(whereKey(scope), eq(idempotencyKeys.state, "in_flight")));
}

const whereKey = (scope: IdempotencyScope) =>
  and(eq(idempotencyKeys.organizationId, scope.organizationId), eq(idempotencyKeys.key, scope.key));

/** Method, path, query, If-Match and the exact body bytes: any difference is a different request. */
async function hashRequest(c: Context<AppEnv>): Promise<string> {
  const url = new URL(c.req.url);
  const body = c.req.method === "GET" || c.req.method === "HEAD" ? "" : await c.req.text();
  return createHash("sha256")
    .update(`${c.req.method}\n${url.pathname}${url.search}\n${c.req.header("if-match") ?? ""}\n`)
    .update(body)
    .digest("hex");
}

async function claim(scope: IdempotencyScope, requestHash: string, now: Date): Promise<boolean> {
  const { db, organizationId, key } = scope;
  const inserted = await db
    .insert(idempotencyKeys)
    .values({
      organizationId,
      key,
      requestHash,
      state: "in_flight",
      createdAt: now,
      expiresAt: new Date(now.getTime() + KEY_TTL_MS),
    })
    .onConflictDoNothing()
    .returning({ key: idempotencyKeys.key });
  if (inserted.length > 0) return true;
  // Expired records and abandoned claims are taken over atomically: the conditional update lets
  // exactly one contender win.
  const takenOver = await db
    .update(idempotencyKeys)
    .set({
      requestHash,
      state: "in_flight",
      responseStatus: null,
      responseHeaders: null,
      responseBody: null,
      createdAt: now,
      expiresAt: new Date(now.getTime() + KEY_TTL_MS),
    })
    .where(
      and(
        whereKey(scope),
        // Column operators, not raw sql: postgres-js under drizzle does not encode a bare Date.
        or(
          lt(idempotencyKeys.expiresAt, now),
          and(
            eq(idempotencyKeys.state, "in_flight"),
            lt(idempotencyKeys.createdAt, new Date(now.getTime() - STALE_CLAIM_MS)),
          ),
        ),
      ),
    )
    .returning({ key: idempotencyKeys.key });
  return takenOver.length > 0;
}

function stored(row: Row): StoredResponse {
  return {
    status: row.responseStatus ?? 200,
    headers: row.responseHeaders ?? {},
    body: row.responseBody ?? "",
  };
}

function replay(response: StoredResponse): Response {
  const headers = new Headers(response.headers);
  headers.set("idempotency-replayed", "true");
  return new Response(response.body, { status: response.status, headers });
}

/** Deletes expired records; run periodically. */
export async function sweepIdempotencyKeys(db: Db, now: Date): Promise<number> {
  const deleted = await db
    .delete(idempotencyKeys)
    .where(lt(idempotencyKeys.expiresAt, now))
    .returning({ key: idempotencyKeys.key });
  return deleted.length;
}
