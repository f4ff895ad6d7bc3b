import { and, eq, inArray } from "drizzle-orm";
import type { ServiceContext } from "../../context.ts";
import { readPage } from "../../platform/db/pagination.ts";
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
  const { ctx, input } = args;
  const db = ctx.deps.db;
  await findEnvironment(db, ctx, input.environmentId);
  const scope = and(
    eq(mcpConnections.environmentId, input.environmentId),
    eq(mcpConnections.organizationId, ctx.actor.organizationId),
  );
  const page = await readPage(db, mcpConnections, scope, input, (row) => row);
  const rows = page.items;
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
  return {
    items: rows.map((row) =>
      toConnection(row, row.latestDiscoveryId ? byId.get(row.latestDiscoveryId) : null),
    ),
    nextCursor: page.nextCursor,
  };
}
