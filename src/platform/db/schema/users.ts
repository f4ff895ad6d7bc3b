import { index, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { organizations } from "./organizations.ts";

export const users = pgTable("users", {
  id: text("id").primaryKey(),
  /** Stored lowercased; unique across the service. */
  email: text("email").notNull().unique(),
  displayName: text("display_name"),
  /** argon2id (PHC string) for web sign-in; null until one is set (invitation, admin set-password). */
  passwordHash: text("password_hash"),
  createdAt: timestamp("created_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
});

export const roles = ["owner", "admin", "member"] as const;
export type Role = (typeof roles)[number];

export const memberships = pgTable(
  "memberships",
  {
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    role: text("role", { enum: roles }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.userId] }), index("memberships_user_idx").on(t.userId)],
);
