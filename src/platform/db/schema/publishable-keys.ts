import { index, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { environments } from "./environments.ts";
import { organizations } from "./organizations.ts";

/**
 * Publishable environment keys (`pk_…`): they only let telemetry into one environment, so they
 * may be embedded in shipped code. Still stored as a SHA-256 only, like secret keys: the list
 * never needs the key, and a database dump then cannot be replayed as ingest traffic.
 */
export const publishableKeys = pgTable(
  "publishable_keys",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    environmentId: uuid("environment_id")
      .notNull()
      .references(() => environments.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    prefix: text("prefix").notNull(),
    keyHash: text("key_hash").notNull().unique(),
    createdBy: text("created_by").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true, precision: 3 }),
    revokedAt: timestamp("revoked_at", { withTimezone: true, precision: 3 }),
  },
  (t) => [index("publishable_keys_env_page_idx").on(t.environmentId, t.createdAt, t.id)],
);
