import { index, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { millis } from "./columns.ts";
import { organizationRef } from "./organizations.ts";

export const users = pgTable("users", {
  id: text("id").primaryKey(),
  /** Stored lowercased; unique across the service. */
  email: text("email").notNull().unique(),
  displayName: text("display_name"),
  /** argon2id (PHC string) for web sign-in; null until one is set (invitation, admin set-password). */
  passwordHash: text("password_hash"),
  createdAt: millis("created_at").notNull().defaultNow(),
});

/** The user a row belongs to: deleting the user deletes the row. */
export const userRef = (name = "user_id") =>
  text(name)
    .notNull()
    .references(() => users.id, { onDelete: "cascade" });

export const roles = ["owner", "admin", "member"] as const;
export type Role = (typeof roles)[number];

export const memberships = pgTable(
  "memberships",
  {
    organizationId: organizationRef(),
    userId: userRef(),
    role: text("role", { enum: roles }).notNull(),
    createdAt: millis("created_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.userId] }), index("memberships_user_idx").on(t.userId)],
);
