import { index, pgTable, text } from "drizzle-orm/pg-core";
import { millis } from "./columns.ts";
import { environmentRef } from "./environments.ts";
import { organizationRef } from "./organizations.ts";

/**
 * Publishable environment keys (`pk_…`): they only let telemetry into one environment, so they
 * may be embedded in shipped code. Still stored as a SHA-256 only, like secret keys: the list
 * never needs the key, and a database dump then cannot be replayed as ingest traffic.
 */
export const publishableKeys = pgTable(
  "publishable_keys",
  {
    id: text("id").primaryKey(),
    organizationId: organizationRef(),
    environmentId: environmentRef(),
    name: text("name").notNull(),
    prefix: text("prefix").notNull(),
    keyHash: text("key_hash").notNull().unique(),
    createdBy: text("created_by").notNull(),
    createdAt: millis("created_at").notNull().defaultNow(),
    lastUsedAt: millis("last_used_at"),
    revokedAt: millis("revoked_at"),
  },
  (t) => [index("publishable_keys_env_page_idx").on(t.environmentId, t.createdAt, t.id)],
);
