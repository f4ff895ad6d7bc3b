import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, test } from "vitest";
import { newUuid } from "../../src/ids.ts";
import { type DatabaseHandle, openDatabase } from "../../src/platform/db/client.ts";
import { migrateDatabase } from "../../src/platform/db/migrate.ts";
import { organizations } from "../../src/platform/db/schema/organizations.ts";
import { generateKek, parseKeyring } from "../../src/platform/vault/keyring.ts";
import { claimPayment, findPayment } from "../../src/transports/x402/payment-lock.ts";
import { type PgCluster, startPgCluster } from "./lib/pg-cluster.ts";

/**
 * A payment's claim commits without waiting for its WAL flush (payment-lock.ts). What makes that
 * safe: PostgreSQL writes WAL in order, so the handler's own synchronous commit after the claim
 * makes the claim durable too. Here the postmaster is killed right after such a commit — a crash,
 * with no shutdown checkpoint — and the claim must be there after recovery.
 */
let cluster: PgCluster;
let handle: DatabaseHandle | undefined;

beforeAll(async () => {
  cluster = await startPgCluster();
}, 60_000);

afterAll(async () => {
  await handle?.close().catch(() => {});
  await cluster?.destroy();
});

test("a claim followed by a handler's synchronous commit survives a crash", async () => {
  const url = await cluster.createDatabase("claims");
  handle = await openDatabase({ kind: "postgres", url });
  await migrateDatabase(handle);
  const lock = {
    db: handle.db,
    keyring: parseKeyring(generateKek(1)),
    key: {
      network: "eip155:31337",
      asset: `0x${"aa".repeat(20)}`,
      payer: `0x${"bb".repeat(20)}`,
      nonce: `0x${randomBytes(32).toString("hex")}`,
    },
  };
  const now = new Date();
  const claim = await claimPayment(
    lock,
    {
      paymentHash: "p",
      requestHash: "r",
      route: "POST /x402/signup",
      amount: "10000",
      requirements: { amount: "10000" },
      expiresAt: new Date(now.getTime() + 86_400_000),
    },
    now,
  );
  expect(claim, "the payment was claimed").toBeDefined();
  // The handler's write, committed synchronously as every write outside the claim is.
  const orgId = `org_${newUuid()}`;
  await handle.db.insert(organizations).values({ id: orgId, name: "paid signup" });
  await cluster.killPostmaster();
  await handle.close().catch(() => {});
  handle = undefined;

  await cluster.start();
  handle = await openDatabase({ kind: "postgres", url });
  const row = await findPayment({ ...lock, db: handle.db });
  expect(row?.state, "the claim after recovery").toBe("in_flight");
});
