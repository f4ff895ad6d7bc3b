import { createHash } from "node:crypto";
import { and, eq, gt, isNull, lte, notExists, or } from "drizzle-orm";
import type { Db } from "../../platform/db/client.ts";
import { oauthGrants, oauthModels } from "../../platform/db/schema/oauth.ts";

/** What oidc-provider stores per model instance (see its example/my_adapter.js). */
type StoredPayload = Record<string, unknown>;

/** The storage interface oidc-provider expects of an adapter, one instance per model name. */
type OAuthAdapter = {
  upsert(id: string, payload: StoredPayload, expiresIn?: number): Promise<void>;
  find(id: string): Promise<StoredPayload | undefined>;
  findByUserCode(userCode: string): Promise<StoredPayload | undefined>;
  findByUid(uid: string): Promise<StoredPayload | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
};

/**
 * Models whose id is the bearer secret, only ever found by presenting it: stored without `jti`,
 * so the table holds nothing a client could send back (device codes and sessions keep theirs).
 */
const idIsSecret = new Set([
  "AccessToken",
  "RefreshToken",
  "AuthorizationCode",
  "ClientCredentials",
  "RegistrationAccessToken",
  "InitialAccessToken",
  "PushedAuthorizationRequest",
]);

const hashKey = (value: string): string => createHash("sha256").update(value).digest("hex");

/** oidc-provider's adapter over `oauth_models`, shared by every instance; expired rows are never returned. */
export function createOAuthAdapter(db: Db, model: string): OAuthAdapter {
  const secret = idIsSecret.has(model);
  const byKey = (id: string) => and(eq(oauthModels.model, model), eq(oauthModels.key, hashKey(id)));
  const live = (now: Date) => or(isNull(oauthModels.expiresAt), gt(oauthModels.expiresAt, now));
  const restore = (
    id: string | undefined,
    row: { payload: StoredPayload; consumedAt: Date | null },
  ): StoredPayload => ({
    ...row.payload,
    ...(secret && id !== undefined ? { jti: id } : {}),
    ...(row.consumedAt ? { consumed: Math.floor(row.consumedAt.getTime() / 1000) } : {}),
  });
  const findWhere = async (where: ReturnType<typeof and>, id?: string) => {
    const [row] = await db
      .select({ payload: oauthModels.payload, consumedAt: oauthModels.consumedAt })
      .from(oauthModels)
      .where(and(eq(oauthModels.model, model), where, live(new Date())))
      .limit(1);
    return row ? restore(id, row) : undefined;
  };

  return {
    async upsert(id, payload, expiresIn) {
      const { jti: _jti, ...withoutId } = payload;
      const stored = secret ? withoutId : payload;
      const grantId = model === "Grant" ? id : typeof payload.grantId === "string" ? payload.grantId : null;
      const userCode = typeof payload.userCode === "string" ? hashKey(payload.userCode) : null;
      const uid = typeof payload.uid === "string" ? payload.uid : null;
      const expiresAt = expiresIn ? new Date(Date.now() + expiresIn * 1000) : null;
      const values = { payload: stored, grantId, userCode, uid, expiresAt };
      await db
        .insert(oauthModels)
        .values({ model, key: hashKey(id), ...values })
        .onConflictDoUpdate({ target: [oauthModels.model, oauthModels.key], set: values });
    },
    find: (id) => findWhere(eq(oauthModels.key, hashKey(id)), id),
    findByUserCode: (userCode) => findWhere(eq(oauthModels.userCode, hashKey(userCode))),
    findByUid: (uid) => findWhere(eq(oauthModels.uid, uid)),
    async consume(id) {
      await db.update(oauthModels).set({ consumedAt: new Date() }).where(byKey(id));
    },
    async destroy(id) {
      await db.delete(oauthModels).where(byKey(id));
    },
    async revokeByGrantId(grantId) {
      await db.delete(oauthModels).where(and(eq(oauthModels.model, model), eq(oauthModels.grantId, grantId)));
    },
  };
}

/**
 * Deletes expired provider state, and the organisation bindings of grants that are gone
 * (revoked, or expired a day ago or more); run periodically (main.ts).
 */
export async function sweepOAuthModels(db: Db, now: Date): Promise<number> {
  const gone = await db
    .delete(oauthModels)
    .where(lte(oauthModels.expiresAt, now))
    .returning({ key: oauthModels.key });
  const dayAgo = new Date(now.getTime() - 24 * 60 * 60 * 1000);
  await db.delete(oauthGrants).where(
    and(
      lte(oauthGrants.createdAt, dayAgo),
      notExists(
        db
          .select({ key: oauthModels.key })
          .from(oauthModels)
          .where(and(eq(oauthModels.model, "Grant"), eq(oauthModels.grantId, oauthGrants.grantId))),
      ),
    ),
  );
  return gone.length;
}
