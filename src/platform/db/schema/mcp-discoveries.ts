import { index, integer, jsonb, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { millis } from "./columns.ts";
import { mcpConnections, type ToolDefinition } from "./mcp-connections.ts";

/** A discovered tool as shown for review: its definition plus whether it may be approved. */
export type DiscoveredTool = ToolDefinition & {
  hash: string;
  approvable: boolean;
  reason?: string | undefined;
};

/** The server-derived tool list of one discovery run, kept for review and approval. */
export const mcpDiscoveries = pgTable(
  "mcp_discoveries",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id").notNull(),
    environmentId: uuid("environment_id").notNull(),
    connectionId: text("connection_id")
      .notNull()
      .references(() => mcpConnections.id, { onDelete: "cascade" }),
    connectionRevision: integer("connection_revision").notNull(),
    configVersion: integer("config_version").notNull(),
    manifestHash: text("manifest_hash").notNull(),
    toolCount: integer("tool_count").notNull(),
    tools: jsonb("tools").$type<DiscoveredTool[]>().notNull(),
    discoveredAt: millis("discovered_at").notNull(),
  },
  (t) => [index("mcp_discoveries_connection_idx").on(t.connectionId, t.discoveredAt)],
);
