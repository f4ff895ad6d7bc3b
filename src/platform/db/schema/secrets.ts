import { integer, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { millis } from "./columns.ts";
import { mcpConnections } from "./mcp-connections.ts";

/**
 * The organisation vault: envelope-encrypted credentials (src/platform/vault). One live secret
 * per connection; rotation replaces the row. No column holds plaintext or key material.
 */
export const vaultSecrets = pgTable("vault_secrets", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull(),
  environmentId: uuid("environment_id").notNull(),
  connectionId: text("connection_id")
    .notNull()
    .unique()
    .references(() => mcpConnections.id, { onDelete: "cascade" }),
  credentialVersion: integer("credential_version").notNull(),
  kekVersion: integer("kek_version").notNull(),
  wrappedKey: text("wrapped_key").notNull(),
  wrapIv: text("wrap_iv").notNull(),
  iv: text("iv").notNull(),
  ciphertext: text("ciphertext").notNull(),
  createdAt: millis("created_at").notNull().defaultNow(),
  rewrappedAt: millis("rewrapped_at"),
});
