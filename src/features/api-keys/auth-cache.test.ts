import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll } from "vitest";
import { createTestDatabase, testPgUrl } from "../../../test/database.ts";
import { describe, expect, test } from "../../../test/fixtures.ts";
import { client } from "../../../test/http.ts";
import type { MemberActor } from "../../actor.ts";
import { createApp } from "../../app.ts";
import type { Deps } from "../../deps.ts";
import { type DatabaseHandle, openDatabase, type Subscription } from "../../platform/db/client.ts";
import { apiKeys } from "../../platform/db/schema/api-keys.ts";
import { memberships } from "../../platform/db/schema/users.ts";
import { withServices } from "../../services.ts";
import { bootstrapOrganization } from "../organizations/bootstrap-organization.ts";
import { type AuthCacheOptions, createAuthCache } from "./auth-cache.ts";
import { listenForAuthChanges, notifyAuthChanged } from "./auth-changes.ts";
import { hashApiKeySecret } from "./key-secret.ts";

/**
 * Two "instances" (each its own Deps, cache, LISTEN and app) on one database. On PostgreSQL
 * (`PATCHBAY_TEST_PG`) each has its own connection pool and listener connection, as two
 * processes would; on PGlite they share the one in-process database.
 */
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let second: DatabaseHandle;
const subscriptions: Subscription[] = [];
/** Each instance's services: their telemetry timers stop before the database goes. */
const instances: Deps[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  second = database.url ? await openDatabase({ kind: "postgres", url: database.url }) : database.handle;
});

afterAll(async () => {
  await Promise.all(subscriptions.map((s) => s.close()));
  await Promise.all(instances.map((d) => d.telemetry.close()));
  if (second !== database.handle) await second.close();
  await database.drop();
});

async function instance(base: Deps, handle: DatabaseHandle, options: AuthCacheOptions = {}) {
  const authCache = createAuthCache(options);
  subscriptions.push(await listenForAuthChanges(handle, authCache, base.logger));
  const deps = withServices({ ...base, db: handle.db, database: handle, authCache });
  instances.push(deps);
  return { deps, app: createApp(deps), cache: authCache };
}

/** Two instances and a fresh organisation whose owner key both have already cached. */
async function twoInstances(base: Deps, options: AuthCacheOptions = {}) {
  const a = await instance(base, database.handle, options);
  const b = await instance(base, second, options);
  const tenant = await bootstrapOrganization({ db: database.handle.db, input: {} });
  for (const i of [a, b]) {
    expect((await client(i.app, tenant.apiKey).get("/me")).status).toBe(200);
    expect(i.cache.get(hashApiKeySecret(tenant.apiKey))).toBeDefined();
  }
  return { a, b, tenant };
}

/**
 * LISTEN/NOTIFY is asynchronous: another instance drops its entry when the notification reaches
 * it, milliseconds after the commit. Waits for that (bounded) and says how long it took.
 */
async function delivered(cache: { get(hash: string): unknown }, secret: string): Promise<number> {
  const started = performance.now();
  while (cache.get(hashApiKeySecret(secret)) !== undefined) {
    if (performance.now() - started > 2_000) throw new Error("the notification never arrived");
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return performance.now() - started;
}

describe("API key cache across instances", () => {
  test("a key revoked on one instance is refused by the other", async ({ deps }) => {
    const { a, b, tenant } = await twoInstances(deps);
    const made = await client(a.app, tenant.apiKey).post("/api-keys", {
      name: "temp",
      permissions: ["environments:read"],
    });
    const { apiKey, secret } = (await made.json()) as { apiKey: { id: string }; secret: string };
    for (const i of [a, b]) expect((await client(i.app, secret).get("/me")).status).toBe(200);

    expect((await client(a.app, tenant.apiKey).delete(`/api-keys/${apiKey.id}`)).status).toBe(204);
    // The revoking instance: the very next request, no waiting.
    expect((await client(a.app, secret).get("/me")).status).toBe(401);
    // The other: once the notification is in (PGlite: already, before the COMMIT returned).
    expect(await delivered(b.cache, secret)).toBeLessThan(1_000);
    expect((await client(b.app, secret).get("/me")).status).toBe(401);
    // The organisation's other keys are read again, not refused.
    expect((await client(b.app, tenant.apiKey).get("/me")).status).toBe(200);
  });

  test("a role change announced with notifyAuthChanged reaches the other instance", async ({ deps }) => {
    const { a, b, tenant } = await twoInstances(deps);
    await database.handle.db.transaction(async (tx) => {
      await tx
        .update(memberships)
        .set({ role: "member" })
        .where(
          and(eq(memberships.organizationId, tenant.organizationId), eq(memberships.userId, tenant.userId)),
        );
      await notifyAuthChanged(tx, a.deps, { organizationId: tenant.organizationId });
    });
    await delivered(b.cache, tenant.apiKey);
    for (const i of [a, b]) {
      const me = await client(i.app, tenant.apiKey).get("/me");
      expect(await me.json()).toMatchObject({ role: "member" });
      // Management needs owner/admin: refused at once, on both.
      const made = await client(i.app, tenant.apiKey).post("/environments", { name: "nope" });
      expect(made.status).toBe(403);
    }
  });

  test("a permission removed with a notification is refused on the other instance", async ({ deps }) => {
    const { a, b, tenant } = await twoInstances(deps);
    const path = `/environments/${tenant.environmentId}`;
    expect((await client(b.app, tenant.apiKey).get(path)).status).toBe(200);
    await database.handle.db.transaction(async (tx) => {
      await tx
        .update(apiKeys)
        .set({ permissions: ["api_keys:read"] })
        .where(eq(apiKeys.organizationId, tenant.organizationId));
      await notifyAuthChanged(tx, a.deps, { organizationId: tenant.organizationId });
    });
    await delivered(b.cache, tenant.apiKey);
    expect((await client(b.app, tenant.apiKey).get(path)).status).toBe(403);
    expect((await client(a.app, tenant.apiKey).get(path)).status).toBe(403);
  });

  test("a change that rolls back invalidates nothing anywhere else", async ({ deps }) => {
    const { a, b, tenant } = await twoInstances(deps);
    await expect(
      database.handle.db.transaction(async (tx) => {
        await notifyAuthChanged(tx, a.deps, { organizationId: tenant.organizationId });
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(b.cache.get(hashApiKeySecret(tenant.apiKey))).toBeDefined();
  });

  test("without a notification, a change shows once the TTL has passed", async ({ deps }) => {
    let now = 0;
    const { b, tenant } = await twoInstances(deps, { ttlMs: 30_000, now: () => now });
    await database.handle.db
      .update(memberships)
      .set({ role: "admin" })
      .where(eq(memberships.organizationId, tenant.organizationId));
    now = 29_000;
    expect(await (await client(b.app, tenant.apiKey).get("/me")).json()).toMatchObject({ role: "owner" });
    now = 30_001;
    expect(await (await client(b.app, tenant.apiKey).get("/me")).json()).toMatchObject({ role: "admin" });
  });

  test.skipIf(!testPgUrl)(
    "when the LISTEN connection drops, nothing is cached until it is back",
    async ({ deps }) => {
      const { b, tenant } = await twoInstances(deps);
      // The listener connections of this database (both instances'), as a network cut would.
      await second.db.execute(sql`select pg_terminate_backend(pid) from pg_stat_activity
        where application_name = 'patchbay-listen' and datname = current_database()`);
      const lost = performance.now();
      while (b.cache.trusted) {
        if (performance.now() - lost > 2_000) throw new Error("the loss was not noticed");
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      expect(b.cache.size).toBe(0);
      // A change without a notification is seen at once: every request reads the database.
      await database.handle.db
        .update(memberships)
        .set({ role: "member" })
        .where(eq(memberships.organizationId, tenant.organizationId));
      expect(await (await client(b.app, tenant.apiKey).get("/me")).json()).toMatchObject({ role: "member" });
      // And it re-listens by itself.
      while (!b.cache.trusted) {
        if (performance.now() - lost > 5_000) throw new Error("LISTEN was not re-established");
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect((await client(b.app, tenant.apiKey).get("/me")).status).toBe(200);
      expect(b.cache.get(hashApiKeySecret(tenant.apiKey))).toBeDefined();
    },
  );
});

describe("API key cache bounds", () => {
  const actor = (organizationId: string): MemberActor => ({
    type: "api_key",
    id: `key_${organizationId}`,
    userId: "usr_x",
    organizationId,
    role: "owner",
    permissions: new Set(),
  });
  const trustedCache = (options: AuthCacheOptions) => {
    const cache = createAuthCache(options);
    cache.setTrusted(true);
    return cache;
  };

  test("holds at most maxEntries, dropping the least recently used", () => {
    const cache = trustedCache({ maxEntries: 3 });
    for (const k of ["a", "b", "c"]) cache.set(k, { actor: actor(k), lastUsedAt: null }, cache.ticket());
    expect(cache.get("a")).toBeDefined(); // a is now the most recently used
    cache.set("d", { actor: actor("d"), lastUsedAt: null }, cache.ticket());
    expect(cache.size).toBe(3);
    expect(cache.get("b")).toBeUndefined();
    for (const k of ["a", "c", "d"]) expect(cache.get(k)).toBeDefined();
    for (let i = 0; i < 1_000; i++)
      cache.set(`k${i}`, { actor: actor("e"), lastUsedAt: null }, cache.ticket());
    expect(cache.size).toBe(3);
  });

  test("entries expire after the TTL", () => {
    let now = 1_000;
    const cache = trustedCache({ ttlMs: 30_000, now: () => now });
    cache.set("a", { actor: actor("o"), lastUsedAt: null }, cache.ticket());
    now += 29_999;
    expect(cache.get("a")).toBeDefined();
    now += 2;
    expect(cache.get("a")).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  test("an answer read across an invalidation is not stored", () => {
    const cache = trustedCache({});
    const ticket = cache.ticket();
    cache.dropOrganization("other");
    cache.set("a", { actor: actor("o"), lastUsedAt: null }, ticket);
    expect(cache.get("a")).toBeUndefined();
  });

  test("a held organisation is not cached until its notification is back or the hold expires", () => {
    let now = 0;
    const cache = trustedCache({ holdMs: 10_000, now: () => now });
    cache.hold("o", "t1");
    cache.set("a", { actor: actor("o"), lastUsedAt: null }, cache.ticket());
    cache.set("b", { actor: actor("p"), lastUsedAt: null }, cache.ticket());
    expect(cache.get("a")).toBeUndefined();
    expect(cache.get("b")).toBeDefined();
    cache.release("t1");
    cache.set("a", { actor: actor("o"), lastUsedAt: null }, cache.ticket());
    expect(cache.get("a")).toBeDefined();
    cache.hold("o", "t2"); // never released: rolled back
    now = 10_001;
    cache.set("a", { actor: actor("o"), lastUsedAt: null }, cache.ticket());
    expect(cache.get("a")).toBeDefined();
  });

  test("an untrusted cache (not listening) serves and stores nothing", () => {
    const cache = trustedCache({});
    cache.set("a", { actor: actor("o"), lastUsedAt: null }, cache.ticket());
    cache.setTrusted(false);
    expect(cache.size).toBe(0);
    cache.set("a", { actor: actor("o"), lastUsedAt: null }, cache.ticket());
    expect(cache.get("a")).toBeUndefined();
  });
});
