import { boolean, index, integer, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { millis } from "./columns.ts";
import { environmentRef } from "./environments.ts";
import { organizationRef } from "./organizations.ts";

export const authKinds = ["none", "bearer", "api_key"] as const;
export type AuthKind = (typeof authKinds)[number];

/** One approved tool definition, frozen at approval time (the "approved manifest"). */
export type ToolDefinition = {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown> | undefined;
  annotations?: Record<string, unknown> | undefined;
};

/**
 * A customer MCP server attached to one environment. Readiness is derived from these columns,
 * never stored. `configVersion` counts endpoint/auth changes: an approval or discovery made
 * under another config version is stale.
 */
export const mcpConnections = pgTable(
  "mcp_connections",
  {
    id: text("id").primaryKey(),
    organizationId: organizationRef(),
    environmentId: environmentRef(),
    alias: text("alias").notNull(),
    displayName: text("display_name").notNull(),
    /** Full canonical URL: write side only, never returned. */
    endpointUrl: text("endpoint_url").notNull(),
    endpointOrigin: text("endpoint_origin").notNull(),
    authKind: text("auth_kind", { enum: authKinds }).notNull(),
    authHeaderName: text("auth_header_name"),
    enabled: boolean("enabled").notNull().default(false),
    revision: integer("revision").notNull().default(1),
    configVersion: integer("config_version").notNull().default(1),
    /** Monotonic count of credentials ever set; binds the vault ciphertext (AAD). */
    credentialVersion: integer("credential_version").notNull().default(0),
    /** Null when no credential is attached. */
    credentialUpdatedAt: millis("credential_updated_at"),
    latestDiscoveryId: text("latest_discovery_id"),
    approvedAt: millis("approved_at"),
    approvedBy: text("approved_by"),
    approvedConfigVersion: integer("approved_config_version"),
    approvedManifest: jsonb("approved_manifest").$type<ToolDefinition[]>(),
    approvedManifestHash: text("approved_manifest_hash"),
    approvedToolCount: integer("approved_tool_count").notNull().default(0),
    /**
     * Approved tools an owner or admin attested, tool by tool, to only read: they join the
     * tools whose annotations say so in the `read` access class (features/connections/tool-access.ts).
     */
    attestedReadTools: jsonb("attested_read_tools").$type<string[]>().notNull().default([]),
    /**
     * Health, written by the task runtime with the call record (features/tasks/call-record.ts):
     * never part of readiness. A call counts as a success when the remote answered (also with a
     * tool error), as a failure when it did not, timed out, or refused the request.
     */
    lastSuccessAt: millis("last_success_at"),
    lastFailureAt: millis("last_failure_at"),
    lastFailureCode: text("last_failure_code"),
    consecutiveFailures: integer("consecutive_failures").notNull().default(0),
    /**
     * Set when the remote answered 401/403 (`remote_auth_failed`) after the last success, cleared
     * by the next success or a new credential: one `connection.credential_rejected` event per set.
     */
    credentialRejectedAt: millis("credential_rejected_at"),
    createdAt: millis("created_at").notNull().defaultNow(),
    updatedAt: millis("updated_at").notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("mcp_connections_env_alias_uq").on(t.environmentId, t.alias),
    index("mcp_connections_env_page_idx").on(t.environmentId, t.createdAt, t.id),
  ],
);
