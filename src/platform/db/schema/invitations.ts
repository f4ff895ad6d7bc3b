import { index, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { organizations } from "./organizations.ts";
import { roles, users } from "./users.ts";

/**
 * Invitations to join an organisation: a single-use, expiring link. Only a hash of the link's
 * token is stored; the link itself is shown once, to the owner who made it.
 */
export const invitations = pgTable(
  "invitations",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    /** Stored lowercased: the account that may accept it. */
    email: text("email").notNull(),
    role: text("role", { enum: roles }).notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    invitedBy: text("invited_by")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    createdAt: timestamp("created_at", { withTimezone: true, precision: 3 }).notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true, precision: 3 }).notNull(),
    acceptedAt: timestamp("accepted_at", { withTimezone: true, precision: 3 }),
    acceptedBy: text("accepted_by"),
    revokedAt: timestamp("revoked_at", { withTimezone: true, precision: 3 }),
  },
  (t) => [index("invitations_org_idx").on(t.organizationId, t.createdAt)],
);
