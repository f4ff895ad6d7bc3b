import { and, asc, eq, inArray } from "drizzle-orm";
import type { ServiceContext } from "../../context.ts";
import { afterCursor, decodeCursor, toPage } from "../../platform/db/pagination.ts";
import { mcpConnections } from "../../platform/db/schema/mcp-connections.ts";
import { mcpDiscoveries } from "../../platform/db/schema/mcp-discoveries.ts";
import { findEnvironment } from "../environments/find-environment.ts";
import { authorizeConnections } from "./authorize.ts";
import type { Connection } from "./schemas.ts";
import { toConnection } from "./to-connection.ts";

export async function listConnections(args: {
  ctx: ServiceContext;
  input: { environmentId: string; pageSize: number; cursor?: string | undefined };
}): Promise<{ items: Connection[]; nextCursor: string | null }> {
  authorizeConnections(args.ctx, "read");
  const db = args.ctx.deps.db;
  await findEnvironment(db, args.ctx, args.input.environmentId);
  const rows = await db
    .select()
    .from(mcpConnections)
    .where(
      and(
        eq(mcpConnections.environmentId, args.input.environmentId),
        eq(mcpConnections.organizationId, args.ctx.actor.organizationId),
        afterCursor(mcpConnections.createdAt, mcpConnections.id, decodeCursor(args.input.cursor)),
      ),
    )
    .orderBy(asc(mcpConnections.createdAt), asc(mcpConnections.id))
    .limit(args.input.pageSize + 1);
  const discoveryIds = rows.flatMap((r) => (r.latestDiscoveryId ? [r.latestDiscoveryId] : []));
  const discoveries = discoveryIds.length
    ? await db
        .select({
          id: mcpDiscoveries.id,
          discoveredAt: mcpDiscoveries.discoveredAt,
          toolCount: mcpDiscoveries.toolCount,
          manifestHash: mcpDiscoveries.manifestHash,
        })
        .from(mcpDiscoveries)
        .where(inArray(mcpDiscoveries.id, discoveryIds))
    : [];
  const byId = new Map(discoveries.map((d) => [d.id, d]));
  return toPage(rows, args.input.pageSize, (row) =>
    toConnection(row, row.latestDiscoveryId ? byId.get(row.latestDiscoveryId) : null),
  );
}
