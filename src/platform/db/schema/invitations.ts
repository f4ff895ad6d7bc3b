import { index, pgTable, text } from "drizzle-orm/pg-core";
import { millis } from "./columns.ts";
import { organizationRef } from "./organizations.ts";
import { roles, userRef } from "./users.ts";

/**
 * Invitations to join an organisation: a single-use, expiring link. Only a hash of the link's
 * token is stored; the link itself is shown once, to the owner who made it.
 */
export const invitations = pgTable(
  "invitations",
  {
    id: text("id").primaryKey(),
    organizationId: organizationRef(),
    /** Stored lowercased: the account that may accept it. */
    email: text("email").notNull(),
    role: text("role", { enum: roles }).notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    invitedBy: userRef("invited_by"),
    createdAt: millis("created_at").notNull(),
    expiresAt: millis("expires_at").notNull(),
    acceptedAt: millis("accepted_at"),
    acceptedBy: text("accepted_by"),
    revokedAt: millis("revoked_at"),
  },
  (t) => [index("invitations_org_idx").on(t.organizationId, t.createdAt)],
);
