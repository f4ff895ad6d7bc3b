import { eq } from "drizzle-orm";
import { requireOwnerOrAdmin, type ServiceContext, withTransaction } from "../../context.ts";
import { newId } from "../../ids.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import { mcpConnections } from "../../platform/db/schema/mcp-connections.ts";
import { mcpDiscoveries } from "../../platform/db/schema/mcp-discoveries.ts";
import { listRemoteTools } from "../../platform/mcp-client/remote-client.ts";
import { assertRevision, type ConnectionRef, findConnection } from "./find-connection.ts";
import { remoteAuthFor } from "./remote-auth.ts";
import type { Discovery } from "./schemas.ts";
import { withAccess } from "./tool-access.ts";

/**
 * Connects through egress, lists every tool within the bounds, and stores the result for
 * review. Does not change the revision. The network call runs outside any transaction; the
 * result is stored only if the connection's revision is still the one the caller named, so a
 * discovery never describes a configuration that changed meanwhile.
 */
export async function discoverConnectionTools(args: {
  ctx: ServiceContext;
  input: ConnectionRef & { revision: number };
}): Promise<Discovery> {
  requireOwnerOrAdmin(args.ctx, "mcp_connections:manage");
  const { ctx, input } = args;
  const db = ctx.deps.db;
  const row = await findConnection(db, ctx, input);
  assertRevision(row, input.revision);
  const auth = await remoteAuthFor(db, ctx.deps.keyring, row);
  const listing = await listRemoteTools({ egress: ctx.deps.egress, endpointUrl: row.endpointUrl, auth });
  const now = ctx.deps.clock();

  return withTransaction(ctx, async (tx) => {
    const current = await findConnection(tx, ctx, input, { forUpdate: true });
    assertRevision(current, input.revision);
    const id = newId("dsc");
    await tx.insert(mcpDiscoveries).values({
      id,
      organizationId: current.organizationId,
      environmentId: current.environmentId,
      connectionId: current.id,
      connectionRevision: current.revision,
      configVersion: current.configVersion,
      manifestHash: listing.manifestHash,
      toolCount: listing.tools.length,
      tools: listing.tools,
      discoveredAt: now,
    });
    await tx.update(mcpConnections).set({ latestDiscoveryId: id }).where(eq(mcpConnections.id, current.id));
    await recordAudit(tx, ctx, {
      action: "mcp_connection.discovered",
      targetType: "mcp_connection",
      targetId: current.id,
      environmentId: current.environmentId,
      details: { discoveryId: id, toolCount: listing.tools.length, manifestHash: listing.manifestHash },
    });
    return {
      id,
      discoveredAt: now.toISOString(),
      connectionRevision: current.revision,
      manifestHash: listing.manifestHash,
      tools: listing.tools.map(withAccess),
    };
  });
}
