import { eq, getTableColumns } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { createTestDatabase } from "../../../test/database.ts";
import { expectGenericFailure, secret } from "../../../test/lib/vault.ts";
import { secretColumnTexts, seedConnection } from "../../../test/lib/vault-connections.ts";
import { AppError } from "../../errors.ts";
import { newId, newUuid } from "../../ids.ts";
import type { Db } from "../db/client.ts";
import { vaultSecrets } from "../db/schema/secrets.ts";
import {
  type CredentialScope,
  destroyCredential,
  readCredential,
  storeCredential,
} from "./credential-store.ts";
import { addKekVersion, generateKek, type Keyring, parseKeyring } from "./keyring.ts";
import { rewrapAllCredentials } from "./rewrap-credentials.ts";

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let db: Db;
const rawV1 = generateKek(1);
const v1 = parseKeyring(rawV1);

beforeAll(async () => {
  database = await createTestDatabase();
  db = database.handle.db;
});
afterAll(() => database.drop());
// Rotation works on the whole table: each test starts from an empty vault.
beforeEach(async () => {
  await db.delete(vaultSecrets);
});

async function stored(plaintext = secret, keyring: Keyring = v1, credentialVersion = 1) {
  const scope = await seedConnection(db);
  await storeCredential(db, keyring, { ...scope, credentialVersion, plaintext });
  return scope;
}

async function rowOf(connectionId: string) {
  return db.select().from(vaultSecrets).where(eq(vaultSecrets.connectionId, connectionId));
}

async function failure(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (error instanceof AppError) return error;
  throw new Error(`expected an AppError, got ${String(error)}`);
}

describe("storeCredential / readCredential", () => {
  test("round-trips, and no column holds the plaintext, raw or base64-decoded", async () => {
    const scope = await stored();
    expect(await readCredential(db, v1, scope)).toBe(secret);

    const columns = await secretColumnTexts(db);
    expect(columns.map((c) => c.column).sort()).toEqual(
      Object.values(getTableColumns(vaultSecrets))
        .map((c) => c.name)
        .sort(),
    );
    const needles = [secret, secret.slice(8, 24)];
    for (const { text } of columns) {
      if (text === null) continue;
      const decoded = Buffer.from(text, "base64");
      for (const needle of needles) {
        expect(text).not.toContain(needle);
        expect(decoded.includes(Buffer.from(needle))).toBe(false);
        expect(decoded.toString("latin1")).not.toContain(needle);
      }
    }
  });

  test("a ciphertext copied onto another connection does not open there", async () => {
    const source = await stored();
    const [row] = await rowOf(source.connectionId);
    if (!row) throw new Error("no row");
    const sameEnv = await seedConnection(db, {
      organizationId: source.organizationId,
      environmentId: source.environmentId,
    });
    const elsewhere = await seedConnection(db);
    for (const target of [sameEnv, elsewhere]) {
      await db.insert(vaultSecrets).values({ ...row, ...target, id: newId("sec") });
      expectGenericFailure(await failure(readCredential(db, v1, target)));
    }
    // Relabelling the credential version breaks it too; the original is untouched.
    await db
      .update(vaultSecrets)
      .set({ credentialVersion: 2 })
      .where(eq(vaultSecrets.connectionId, sameEnv.connectionId));
    expectGenericFailure(await failure(readCredential(db, v1, sameEnv)));
    expect(await readCredential(db, v1, source)).toBe(secret);
  });

  test("reading outside the credential's organisation, environment or connection finds nothing", async () => {
    const scope = await stored();
    const other = await seedConnection(db);
    const wrong: CredentialScope[] = [
      { ...scope, organizationId: other.organizationId },
      { ...scope, environmentId: other.environmentId },
      { ...scope, environmentId: newUuid() },
      { ...scope, environmentId: "not-a-uuid" },
      { ...scope, connectionId: other.connectionId },
      other,
    ];
    for (const s of wrong) expect(await readCredential(db, v1, s)).toBeNull();
    expect(await readCredential(db, v1, scope)).toBe(secret);
  });

  test("storing for a connection outside the given scope is refused and writes nothing", async () => {
    const scope = await seedConnection(db);
    const other = await seedConnection(db);
    for (const s of [
      { ...scope, organizationId: other.organizationId },
      { ...scope, environmentId: other.environmentId },
      { ...scope, environmentId: "not-a-uuid" },
      { ...scope, connectionId: "mcp_missing" },
    ]) {
      const error = await failure(storeCredential(db, v1, { ...s, credentialVersion: 1, plaintext: secret }));
      expect(error.code).toBe("not_found");
    }
    expect(await db.select().from(vaultSecrets)).toEqual([]);
  });

  test("replacing a credential keeps one row, with a new id, data key and binding", async () => {
    const scope = await stored("first-secret");
    const [before] = await rowOf(scope.connectionId);
    await storeCredential(db, v1, { ...scope, credentialVersion: 2, plaintext: "second-secret" });
    const rows = await rowOf(scope.connectionId);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.id).not.toBe(before?.id);
    expect(rows[0]?.id).toMatch(/^sec_/);
    expect(rows[0]?.credentialVersion).toBe(2);
    expect(rows[0]?.wrappedKey).not.toBe(before?.wrappedKey);
    expect(await readCredential(db, v1, scope)).toBe("second-secret");
  });

  test("destroy removes the row; the credential is gone", async () => {
    const scope = await stored();
    expect(await destroyCredential(db, { connectionId: scope.connectionId })).toBe(true);
    expect(await rowOf(scope.connectionId)).toEqual([]);
    expect(await readCredential(db, v1, scope)).toBeNull();
    expect(await destroyCredential(db, { connectionId: scope.connectionId })).toBe(false);
  });
});

describe("rewrapAllCredentials", () => {
  const rawV2 = addKekVersion(rawV1);
  const v2 = parseKeyring(rawV2);
  const onlyV2 = parseKeyring(rawV2.split(",")[0] ?? "");

  async function storeSeveral(n: number, keyring: Keyring = v1) {
    const out: Array<CredentialScope & { plaintext: string }> = [];
    for (let i = 0; i < n; i++) {
      const plaintext = `secret-${i}-${newId("sec")}`;
      out.push({ ...(await stored(plaintext, keyring, i + 1)), plaintext });
    }
    return out;
  }

  test("moves every credential to the active version in batches; all still read, even without v1", async () => {
    const creds = await storeSeveral(5);
    const before = await db.select().from(vaultSecrets);
    expect(await rewrapAllCredentials(db, v2, { batchSize: 2 })).toEqual({ rewrapped: 5, alreadyCurrent: 0 });

    const after = await db.select().from(vaultSecrets);
    for (const row of after) {
      const old = before.find((b) => b.id === row.id);
      expect(row.kekVersion).toBe(2);
      expect(row.rewrappedAt).toBeInstanceOf(Date);
      expect(row.ciphertext).toBe(old?.ciphertext);
      expect(row.iv).toBe(old?.iv);
      expect(row.wrappedKey).not.toBe(old?.wrappedKey);
    }
    for (const c of creds) {
      expect(await readCredential(db, v2, c)).toBe(c.plaintext);
      expect(await readCredential(db, onlyV2, c)).toBe(c.plaintext);
    }
    expect(await rewrapAllCredentials(db, v2)).toEqual({ rewrapped: 0, alreadyCurrent: 5 });
  });

  test("concurrent runs re-wrap each row exactly once", async () => {
    const creds = await storeSeveral(6);
    const runs = await Promise.all([
      rewrapAllCredentials(db, v2, { batchSize: 2 }),
      rewrapAllCredentials(db, v2, { batchSize: 2 }),
      rewrapAllCredentials(db, v2, { batchSize: 3 }),
    ]);
    expect(runs.reduce((sum, r) => sum + r.rewrapped, 0)).toBe(6);
    for (const c of creds) expect(await readCredential(db, onlyV2, c)).toBe(c.plaintext);
  });

  test("a row that does not open is left alone and named; the others are still re-wrapped", async () => {
    const creds = await storeSeveral(3);
    const broken = creds[1];
    if (!broken) throw new Error("no credential");
    await db
      .update(vaultSecrets)
      .set({ credentialVersion: 99 })
      .where(eq(vaultSecrets.connectionId, broken.connectionId));
    const [brokenRow] = await rowOf(broken.connectionId);

    const error = await failure(rewrapAllCredentials(db, v2));
    expect(error.code).toBe("internal");
    expect(error.message).toContain(String(brokenRow?.id));
    expect(error.message).toMatch(/Re-wrapped 2 credential\(s\), but 1 could not be decrypted/);
    expect(`${error.message} ${JSON.stringify(error.details)}`).not.toContain("secret-");
    expect((await rowOf(broken.connectionId))[0]?.kekVersion).toBe(1);
    for (const c of creds.filter((c) => c !== broken)) {
      expect(await readCredential(db, onlyV2, c)).toBe(c.plaintext);
    }
  });

  test("a keyring older than the newest version in use is refused before anything changes", async () => {
    await storeSeveral(2, v2);
    await storeSeveral(1, v1);
    const before = await db.select().from(vaultSecrets);
    const error = await failure(rewrapAllCredentials(db, v1));
    expect(error.message).toContain("2 credential(s) are wrapped under a KEK version newer than v1");
    expect(await db.select().from(vaultSecrets)).toEqual(before);
  });

  test("new credentials are stored under the active version", async () => {
    const [c] = await storeSeveral(1, v2);
    if (!c) throw new Error("no credential");
    expect((await rowOf(c.connectionId))[0]?.kekVersion).toBe(2);
    expect(await readCredential(db, onlyV2, c)).toBe(c.plaintext);
  });
});
