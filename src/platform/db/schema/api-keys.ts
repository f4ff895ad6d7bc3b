import { index, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { millis } from "./columns.ts";
import { organizationRef } from "./organizations.ts";
import { userRef } from "./users.ts";

/** Secret API keys (`sk_…`). Only a SHA-256 of the secret is stored: keys are 192-bit random. */
export const apiKeys = pgTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    organizationId: organizationRef(),
    userId: userRef(),
    name: text("name").notNull(),
    prefix: text("prefix").notNull(),
    secretHash: text("secret_hash").notNull().unique(),
    permissions: jsonb("permissions").$type<string[]>().notNull(),
    createdAt: millis("created_at").notNull().defaultNow(),
    lastUsedAt: millis("last_used_at"),
    revokedAt: millis("revoked_at"),
  },
  (t) => [index("api_keys_org_page_idx").on(t.organizationId, t.createdAt, t.id)],
);
