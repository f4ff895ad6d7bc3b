import { index, integer, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { environments } from "./environments.ts";
import { mcpConnections } from "./mcp-connections.ts";
import { organizations } from "./organizations.ts";
import { users } from "./users.ts";

export const credentialUploadStates = ["pending", "in_progress", "completed", "failed", "expired"] as const;
export type CredentialUploadState = (typeof credentialUploadStates)[number];

/**
 * A single-use browser action for putting a connection's credential into the vault without it
 * passing through an MCP client (spec 4C `prepare_mcp_connection_credential_upload`). Bound to
 * the user who asked, the connection and its revision; alive ten minutes. The link's token is
 * stored as SHA-256; the credential itself never touches this table.
 */
export const credentialUploads = pgTable(
  "credential_uploads",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    environmentId: uuid("environment_id")
      .notNull()
      .references(() => environments.id, { onDelete: "cascade" }),
    connectionId: text("connection_id")
      .notNull()
      .references(() => mcpConnections.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    revision: integer("revision").notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    state: text("state", { enum: credentialUploadStates }).notNull(),
    /** Why a failed upload failed: an error code (e.g. `remote_auth_failed`), never text from the remote. */
    errorCode: text("error_code"),
    createdAt: timestamp("created_at", { withTimezone: true, precision: 3 }).notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true, precision: 3 }).notNull(),
    completedAt: timestamp("completed_at", { withTimezone: true, precision: 3 }),
  },
  (t) => [index("credential_uploads_connection_idx").on(t.connectionId)],
);
