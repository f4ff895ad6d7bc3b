import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, test } from "vitest";
import { createTestDatabase } from "../../../test/database.ts";
import { afterCommit, transaction } from "./after-commit.ts";

let database: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  database = await createTestDatabase({ migrate: false });
  await database.handle.db.execute(sql`create table probe (id text primary key)`);
});
afterAll(() => database?.drop());

/** How many probe rows are committed. */
const committedRows = async () => {
  const result = await database.handle.db.execute(sql`select count(*)::int as n from probe`);
  const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { n: number }[];
  return rows[0]?.n;
};

test("a hook runs once its transaction has committed, in order; never after a rollback", async () => {
  const ran: string[] = [];
  const result = await transaction(database.handle.db, async (tx) => {
    await tx.execute(sql`insert into probe (id) values ('a')`);
    afterCommit(tx, () => ran.push("first"));
    afterCommit(tx, () => ran.push("second"));
    expect(ran).toEqual([]);
    return "done";
  });
  expect(result).toBe("done");
  expect(ran).toEqual(["first", "second"]);
  expect(await committedRows()).toBe(1);

  await expect(
    transaction(database.handle.db, async (tx) => {
      await tx.execute(sql`insert into probe (id) values ('b')`);
      afterCommit(tx, () => ran.push("rolled back"));
      throw new Error("roll back");
    }),
  ).rejects.toThrow("roll back");
  expect(ran).toEqual(["first", "second"]);
  expect(await committedRows()).toBe(1);
});

test("a hook in a nested transaction waits for the outer commit, and goes with an outer rollback", async () => {
  const ran: string[] = [];
  await transaction(database.handle.db, async (outer) => {
    await transaction(outer, async (inner) => {
      await inner.execute(sql`insert into probe (id) values ('nested')`);
      afterCommit(inner, () => ran.push("nested"));
    });
    // The savepoint is released, the outer transaction not yet committed.
    expect(ran).toEqual([]);
  });
  expect(ran).toEqual(["nested"]);

  await expect(
    transaction(database.handle.db, async (outer) => {
      await transaction(outer, async (inner) => {
        await inner.execute(sql`insert into probe (id) values ('nested, rolled back')`);
        afterCommit(inner, () => ran.push("nested, rolled back"));
      });
      throw new Error("roll back");
    }),
  ).rejects.toThrow("roll back");
  expect(ran).toEqual(["nested"]);
});

test("a hook that throws does not fail the committed transaction, nor stop the hooks after it", async () => {
  const ran: string[] = [];
  // Reported as a process warning (printed on stderr), not thrown at the caller.
  const warned = new Promise<Error>((resolve) => process.once("warning", resolve));
  const result = await transaction(database.handle.db, async (tx) => {
    afterCommit(tx, () => {
      throw new Error("hook failed");
    });
    afterCommit(tx, () => ran.push("after"));
    return "committed";
  });
  expect(result).toBe("committed");
  expect(ran).toEqual(["after"]);
  expect(await warned).toMatchObject({
    name: "AfterCommitWarning",
    message: expect.stringContaining("hook failed"),
  });
});

test("outside a transaction a hook runs at once; in a transaction it did not open, never", async () => {
  const ran: string[] = [];
  afterCommit(database.handle.db, () => ran.push("handle"));
  expect(ran).toEqual(["handle"]);
  await database.handle.db.transaction(async (tx) => {
    afterCommit(tx, () => ran.push("drizzle's own transaction"));
    await tx.transaction(async (savepoint) => {
      afterCommit(savepoint, () => ran.push("savepoint"));
    });
  });
  expect(ran).toEqual(["handle"]);
});
