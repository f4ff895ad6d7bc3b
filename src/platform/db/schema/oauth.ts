import { index, jsonb, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { millis } from "./columns.ts";
import { organizationRef } from "./organizations.ts";
import { userRef } from "./users.ts";

/**
 * The OAuth authorization server's state (oidc-provider models: clients, grants, sessions,
 * interactions, codes, tokens), one table for every model so every instance shares it.
 * `key` is the SHA-256 of the model's id: for tokens the id is the token itself, so a read of
 * this table yields no usable token (see features/oauth/adapter.ts for which payloads keep it).
 */
export const oauthModels = pgTable(
  "oauth_models",
  {
    model: text("model").notNull(),
    key: text("key").notNull(),
    payload: jsonb("payload").$type<Record<string, unknown>>().notNull(),
    /** The grant a token or code belongs to (the grant's own id on Grant rows), for revocation. */
    grantId: text("grant_id"),
    /** SHA-256 of a device code's user code, for the verification page's lookup. */
    userCode: text("user_code"),
    /** A session's fixed uid. */
    uid: text("uid"),
    expiresAt: millis("expires_at"),
    consumedAt: millis("consumed_at"),
  },
  (t) => [
    primaryKey({ columns: [t.model, t.key] }),
    index("oauth_models_grant_idx").on(t.grantId),
    index("oauth_models_user_code_idx").on(t.model, t.userCode),
    index("oauth_models_uid_idx").on(t.model, t.uid),
    index("oauth_models_expires_idx").on(t.expiresAt),
  ],
);

/**
 * Which organisation a grant acts for: chosen by the person at consent (authorization code) or
 * device approval. Tokens carry their grant id; every request resolves it here together with the
 * live membership, so a removed member's tokens stop working at once.
 */
export const oauthGrants = pgTable(
  "oauth_grants",
  {
    /** `oag_…`: the actor id audit rows name (the provider's grant id is kept apart). */
    id: text("id").primaryKey(),
    grantId: text("grant_id").notNull().unique(),
    organizationId: organizationRef(),
    userId: userRef(),
    clientId: text("client_id").notNull(),
    /** The scopes granted at consent, space-separated, for the record. */
    scope: text("scope").notNull(),
    createdAt: millis("created_at").notNull(),
  },
  (t) => [index("oauth_grants_member_idx").on(t.organizationId, t.userId)],
);
