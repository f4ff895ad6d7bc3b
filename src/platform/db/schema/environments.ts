import { index, integer, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { millis } from "./columns.ts";
import { organizationRef } from "./organizations.ts";

export const environments = pgTable(
  "environments",
  {
    id: uuid("id").primaryKey(),
    organizationId: organizationRef(),
    name: text("name").notNull(),
    revision: integer("revision").notNull().default(1),
    createdAt: millis("created_at").notNull().defaultNow(),
    updatedAt: millis("updated_at").notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("environments_org_name_uq").on(t.organizationId, t.name),
    index("environments_org_page_idx").on(t.organizationId, t.createdAt, t.id),
  ],
);

/** The environment a row belongs to: deleting the environment deletes the row. */
export const environmentRef = () =>
  uuid("environment_id")
    .notNull()
    .references(() => environments.id, { onDelete: "cascade" });
