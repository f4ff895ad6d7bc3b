import { index, integer, pgTable, text } from "drizzle-orm/pg-core";
import { millis } from "./columns.ts";
import { environmentRef } from "./environments.ts";
import { mcpConnections } from "./mcp-connections.ts";
import { organizationRef } from "./organizations.ts";
import { userRef } from "./users.ts";

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
    organizationId: organizationRef(),
    environmentId: environmentRef(),
    connectionId: text("connection_id")
      .notNull()
      .references(() => mcpConnections.id, { onDelete: "cascade" }),
    userId: userRef(),
    revision: integer("revision").notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    state: text("state", { enum: credentialUploadStates }).notNull(),
    /** Why a failed upload failed: an error code (e.g. `remote_auth_failed`), never text from the remote. */
    errorCode: text("error_code"),
    createdAt: millis("created_at").notNull(),
    expiresAt: millis("expires_at").notNull(),
    completedAt: millis("completed_at"),
  },
  (t) => [index("credential_uploads_connection_idx").on(t.connectionId)],
);
