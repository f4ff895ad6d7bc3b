import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createTestDatabase } from "../test/database.ts";
import { withTransaction } from "./context.ts";
import type { Db } from "./platform/db/client.ts";
import { rowsOf } from "./platform/db/result-rows.ts";

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let db: Db;

beforeAll(async () => {
  database = await createTestDatabase({ migrate: false });
  db = database.handle.db;
  await db.execute(sql`create table notes (body text not null)`);
});
afterAll(() => database.drop());

const notes = async (): Promise<unknown[]> =>
  rowsOf(await db.execute(sql`select body from notes order by body`)).map((r) => r.body);

class Abort extends Error {}

describe("withTransaction", () => {
  test("on a database handle it opens a transaction: a failure rolls back every write in it", async () => {
    await expect(
      withTransaction(db, async (tx) => {
        await tx.execute(sql`insert into notes values ('opened')`);
        throw new Abort();
      }),
    ).rejects.toBeInstanceOf(Abort);
    expect(await notes()).not.toContain("opened");
  });

  test("inside a transaction it joins it: the inner writes commit or roll back with the caller's", async () => {
    await expect(
      db.transaction(async (outer) => {
        await withTransaction(outer, async (tx) => {
          expect(tx).toBe(outer);
          await tx.execute(sql`insert into notes values ('inner')`);
        });
        throw new Abort();
      }),
    ).rejects.toBeInstanceOf(Abort);
    expect(await notes()).not.toContain("inner");

    await db.transaction((outer) =>
      withTransaction(outer, (tx) => tx.execute(sql`insert into notes values ('joined')`)),
    );
    expect(await notes()).toContain("joined");
  });
});
