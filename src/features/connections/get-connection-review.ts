import { eq } from "drizzle-orm";
import type { ServiceContext } from "../../context.ts";
import type { ToolDefinition } from "../../platform/db/schema/mcp-connections.ts";
import { mcpDiscoveries } from "../../platform/db/schema/mcp-discoveries.ts";
import { authorizeConnections } from "./authorize.ts";
import { type ConnectionRef, findConnection } from "./find-connection.ts";
import type { Connection, Discovery } from "./schemas.ts";
import { toConnection } from "./to-connection.ts";

export type ConnectionReview = {
  connection: Connection;
  /** The latest discovery, for review and approval; null before the first. */
  discovery: Discovery | null;
  /** False when the endpoint or auth changed after it: approving from it would be refused. */
  discoveryCurrent: boolean;
  /** The approved manifest's tools (possibly stale: see `connection.approval.stale`). */
  approvedTools: ToolDefinition[];
};

/**
 * Everything an owner reviews on one page: the connection, its latest discovery's tools and the
 * tools approved now. A read: same permission and tenancy as `getConnection`. The endpoint URL
 * and credential are no more part of this than of the connection view.
 */
export async function getConnectionReview(args: {
  ctx: ServiceContext;
  input: ConnectionRef;
}): Promise<ConnectionReview> {
  authorizeConnections(args.ctx, "read");
  const db = args.ctx.deps.db;
  const row = await findConnection(db, args.ctx, args.input);
  const [discovery] = row.latestDiscoveryId
    ? await db.select().from(mcpDiscoveries).where(eq(mcpDiscoveries.id, row.latestDiscoveryId)).limit(1)
    : [];
  return {
    connection: toConnection(row, discovery),
    discovery: discovery
      ? {
          id: discovery.id,
          discoveredAt: discovery.discoveredAt.toISOString(),
          connectionRevision: discovery.connectionRevision,
          manifestHash: discovery.manifestHash,
          tools: discovery.tools,
        }
      : null,
    discoveryCurrent: discovery !== undefined && discovery.configVersion === row.configVersion,
    approvedTools: row.approvedManifest ?? [],
  };
}
