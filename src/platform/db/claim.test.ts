import { randomUUID } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { test as base, describe, expect } from "vitest";
import { createTestDatabase } from "../../../test/database.ts";
import { AppError } from "../../errors.ts";
import {
  type ClaimTable,
  claimIdempotencyKey,
  claimOrReplay,
  type IdempotencyScope,
  releasingOnThrow,
} from "./claim.ts";
import type { Db } from "./client.ts";
import { idempotencyKeys } from "./schema/idempotency-keys.ts";

const test = base.extend<{ db: Db }>({
  db: [
    // biome-ignore lint/correctness/noEmptyPattern: vitest fixtures take their deps by destructuring
    async ({}, use) => {
      const database = await createTestDatabase();
      await use(database.handle.db);
      await database.drop();
    },
    { scope: "file" },
  ],
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const answer = (body: string) => ({ status: 201, headers: { "content-type": "text/plain" }, body });
const scopeOf = (db: Db, caller = "api_key:k1"): IdempotencyScope => ({
  db,
  organizationId: randomUUID(),
  key: randomUUID(),
  caller,
});
const rowOf = async (scope: IdempotencyScope) =>
  (
    await scope.db
      .select()
      .from(idempotencyKeys)
      .where(
        and(eq(idempotencyKeys.organizationId, scope.organizationId), eq(idempotencyKeys.key, scope.key)),
      )
  )[0];
/** A clock the test moves by hand. */
function manualClock() {
  let now = Date.parse("2026-01-01T00:00:00Z");
  return {
    clock: () => new Date(now),
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe("claimIdempotencyKey", () => {
  test("of N concurrent claims one runs; the others wait for it and replay its answer", async ({ db }) => {
    const scope = scopeOf(db);
    let runs = 0;
    const results = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const held = await claimIdempotencyKey(scope, "same request", () => new Date());
        if ("replay" in held) return held.replay;
        runs += 1;
        await sleep(100); // long enough for every other claim to find the key held
        await held.claim.complete(answer("ran once"));
        return answer("ran once");
      }),
    );
    expect(runs).toBe(1);
    expect(results).toEqual(Array(8).fill(answer("ran once")));
    expect(await rowOf(scope)).toMatchObject({ state: "completed", responseBody: "ran once" });
  });

  test("another request or another caller with the same key is idempotency_key_reused", async ({ db }) => {
    const scope = scopeOf(db);
    const held = await claimIdempotencyKey(scope, "first", () => new Date());
    if (!("claim" in held)) throw new Error("expected to claim a new key");
    await held.claim.complete(answer("first"));
    for (const [caller, hash] of [
      ["api_key:k1", "second"],
      ["api_key:k2", "first"],
    ] as const) {
      await expect(claimIdempotencyKey({ ...scope, caller }, hash, () => new Date())).rejects.toMatchObject({
        code: "idempotency_key_reused",
      });
    }
  });

  test("a duplicate of a request still running waits about 4 s, then is idempotency_in_flight", async ({
    db,
  }) => {
    const scope = scopeOf(db);
    expect("claim" in (await claimIdempotencyKey(scope, "slow", () => new Date()))).toBe(true);
    const started = Date.now();
    await expect(claimIdempotencyKey(scope, "slow", () => new Date())).rejects.toMatchObject({
      code: "idempotency_in_flight",
    });
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(4_000);
    expect(waited).toBeLessThan(5_000);
  });

  test("a claim abandoned for over a minute is taken over; the late first holder cannot touch the new claim", async ({
    db,
  }) => {
    const { clock, advance } = manualClock();
    const scope = scopeOf(db);
    const first = await claimIdempotencyKey(scope, "crashy", clock);
    if (!("claim" in first)) throw new Error("expected to claim a new key");
    advance(61_000);
    const second = await claimIdempotencyKey(scope, "crashy", clock);
    if (!("claim" in second)) throw new Error("expected to take over the abandoned claim");

    await first.claim.complete(answer("late"));
    await first.claim.release();
    expect(await rowOf(scope)).toMatchObject({ state: "in_flight", responseBody: null });
    await second.claim.complete(answer("second"));
    expect(await claimIdempotencyKey(scope, "crashy", clock)).toEqual({ replay: answer("second") });
  });

  test("a record past its 24 h is taken over, even by another request", async ({ db }) => {
    const { clock, advance } = manualClock();
    const scope = scopeOf(db);
    const first = await claimIdempotencyKey(scope, "yesterday", clock);
    if (!("claim" in first)) throw new Error("expected to claim a new key");
    await first.claim.complete(answer("yesterday"));
    advance(24 * 60 * 60 * 1000 + 1);
    const again = await claimIdempotencyKey(scope, "today", clock);
    expect("claim" in again).toBe(true);
    expect(await rowOf(scope)).toMatchObject({ state: "in_flight", responseBody: null });
  });

  test("work that throws releases the key: the same request runs again", async ({ db }) => {
    const scope = scopeOf(db);
    const first = await claimIdempotencyKey(scope, "flaky", () => new Date());
    if (!("claim" in first)) throw new Error("expected to claim a new key");
    const boom = new Error("boom");
    await expect(releasingOnThrow(first.claim.release, () => Promise.reject(boom))).rejects.toBe(boom);
    expect(await rowOf(scope)).toBeUndefined();
    expect("claim" in (await claimIdempotencyKey(scope, "flaky", () => new Date()))).toBe(true);
  });
});

describe("claimOrReplay", () => {
  /** An in-memory table: one row, taken by compare-and-set on the row last read. */
  function memoryTable(waitMs: number) {
    let row: { owner: number; answer?: string } | undefined;
    let next = 0;
    const table: ClaimTable<NonNullable<typeof row>, number, string> = {
      waitMs,
      clock: () => new Date(),
      read: async () => row,
      judge: (r) => (r.answer ? { replay: r.answer } : "wait"),
      take: async (seen) => {
        await sleep(1); // let contenders interleave between read and take
        if (row !== seen) return undefined;
        next += 1;
        row = { owner: next };
        return next;
      },
      inFlight: () => new AppError("idempotency_in_flight", "still running"),
    };
    return {
      table,
      complete: (owner: number, answer: string) => {
        if (row?.owner === owner) row = { owner, answer };
      },
      release: (owner: number) => {
        if (row?.owner === owner) row = undefined;
      },
    };
  }

  test("one contender claims; the others replay once it completes, or take the key it released", async () => {
    const memory = memoryTable(1_000);
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const held = await claimOrReplay(memory.table);
        if ("replay" in held) return held.replay;
        await sleep(30);
        memory.complete(held.claim, "done");
        return "ran";
      }),
    );
    expect(outcomes.sort()).toEqual(["done", "done", "done", "done", "ran"]);

    const released = memoryTable(1_000);
    const holder = await claimOrReplay(released.table);
    if (!("claim" in holder)) throw new Error("expected a claim");
    const waiting = claimOrReplay(released.table);
    await sleep(60);
    released.release(holder.claim);
    expect(await waiting).toEqual({ claim: 2 });
  });

  test("a key held past waitMs is the table's in-flight error, soon after the wait", async () => {
    const memory = memoryTable(200);
    await claimOrReplay(memory.table);
    const started = Date.now();
    await expect(claimOrReplay(memory.table)).rejects.toMatchObject({ code: "idempotency_in_flight" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    expect(Date.now() - started).toBeLessThan(600);
  });
});
