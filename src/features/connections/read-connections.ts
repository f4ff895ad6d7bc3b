import { and, eq } from "drizzle-orm";
import { requireOwnerOrAdmin, type ServiceContext } from "../../context.ts";
import { readPage } from "../../platform/db/pagination.ts";
import type { ToolDefinition } from "../../platform/db/schema/mcp-connections.ts";
import { mcpConnections } from "../../platform/db/schema/mcp-connections.ts";
import { mcpDiscoveries } from "../../platform/db/schema/mcp-discoveries.ts";
import { findEnvironment } from "../environments/index.ts";
import { type ConnectionRef, findConnection } from "./find-connection.ts";
import type { Connection, Discovery } from "./schemas.ts";
import { withAccess } from "./tool-access.ts";
import { listedConnectionColumns, toListedConnection, viewConnection } from "./view-connection.ts";

// Reads need `mcp_connections:read` and an owner or admin, like changes (spec 5.2/5.4).

export async function getConnection(args: {
  ctx: ServiceContext;
  input: ConnectionRef;
}): Promise<Connection> {
  requireOwnerOrAdmin(args.ctx, "mcp_connections:read");
  const row = await findConnection(args.ctx.deps.db, args.ctx, args.input);
  return viewConnection(args.ctx.deps.db, row);
}

export async function listConnections(args: {
  ctx: ServiceContext;
  input: { environmentId: string; pageSize: number; cursor?: string | undefined };
}): Promise<{ items: Connection[]; nextCursor: string | null }> {
  requireOwnerOrAdmin(args.ctx, "mcp_connections:read");
  const { ctx, input } = args;
  const db = ctx.deps.db;
  await findEnvironment(db, ctx, input.environmentId);
  const scope = { environmentId: input.environmentId, organizationId: ctx.actor.organizationId };
  return readPage(db, mcpConnections, scope, input, toListedConnection, listedConnectionColumns);
}

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
  requireOwnerOrAdmin(args.ctx, "mcp_connections:read");
  const db = args.ctx.deps.db;
  const row = await findConnection(db, args.ctx, args.input);
  const [connection, [discovery]] = await Promise.all([
    viewConnection(db, row),
    row.latestDiscoveryId
      ? db
          .select()
          .from(mcpDiscoveries)
          .where(and(eq(mcpDiscoveries.id, row.latestDiscoveryId), eq(mcpDiscoveries.connectionId, row.id)))
          .limit(1)
      : [],
  ]);
  return {
    connection,
    discovery: discovery
      ? {
          id: discovery.id,
          discoveredAt: discovery.discoveredAt.toISOString(),
          connectionRevision: discovery.connectionRevision,
          manifestHash: discovery.manifestHash,
          tools: discovery.tools.map(withAccess),
        }
      : null,
    discoveryCurrent: discovery !== undefined && discovery.configVersion === row.configVersion,
    approvedTools: row.approvedManifest ?? [],
  };
}
