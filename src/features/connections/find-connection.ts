import { and, eq } from "drizzle-orm";
import type { ServiceContext } from "../../context.ts";
import { AppError } from "../../errors.ts";
import type { Db } from "../../platform/db/client.ts";
import { mcpConnections } from "../../platform/db/schema/mcp-connections.ts";
import { mcpDiscoveries } from "../../platform/db/schema/mcp-discoveries.ts";
import { findEnvironment } from "../environments/find-environment.ts";
import type { Connection } from "./schemas.ts";
import { toConnection } from "./to-connection.ts";

export type ConnectionRow = typeof mcpConnections.$inferSelect;
export type ConnectionRef = { environmentId: string; connectionId: string };

/**
 * The tenancy gate for a connection: environment of the caller's organisation (else 404), and
 * the connection inside exactly that environment (else 404) — a connection is invisible from
 * every other environment. `forUpdate` locks the row for the rest of the transaction;
 * `lockEnvironment` locks the environment row first (verbs that check environment-wide limits).
 */
export async function findConnection(
  db: Db,
  ctx: ServiceContext,
  ref: ConnectionRef,
  opts: { forUpdate?: boolean; lockEnvironment?: boolean } = {},
): Promise<ConnectionRow> {
  await findEnvironment(db, ctx, ref.environmentId, { forUpdate: opts.lockEnvironment === true });
  const query = db
    .select()
    .from(mcpConnections)
    .where(
      and(
        eq(mcpConnections.id, ref.connectionId),
        eq(mcpConnections.environmentId, ref.environmentId),
        eq(mcpConnections.organizationId, ctx.actor.organizationId),
      ),
    )
    .limit(1);
  const [row] = opts.forUpdate ? await query.for("update") : await query;
  if (!row)
    throw new AppError("not_found", `MCP connection ${ref.connectionId} was not found in this environment.`);
  return row;
}

/** 412 with the current revision when the caller's If-Match is out of date. */
export function assertRevision(row: ConnectionRow, revision: number): void {
  if (row.revision !== revision) {
    throw new AppError(
      "revision_conflict",
      "The connection changed since you read it; read it again and repeat the change with the current revision.",
      { currentRevision: row.revision },
    );
  }
}

/** The public view, with the latest discovery's summary. */
export async function viewConnection(db: Db, row: ConnectionRow): Promise<Connection> {
  if (!row.latestDiscoveryId) return toConnection(row, null);
  const [discovery] = await db
    .select({
      id: mcpDiscoveries.id,
      discoveredAt: mcpDiscoveries.discoveredAt,
      toolCount: mcpDiscoveries.toolCount,
      manifestHash: mcpDiscoveries.manifestHash,
    })
    .from(mcpDiscoveries)
    .where(eq(mcpDiscoveries.id, row.latestDiscoveryId))
    .limit(1);
  return toConnection(row, discovery);
}
