import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../platform/db/client.ts";
import { mcpConnections } from "../../platform/db/schema/mcp-connections.ts";
import type { ConnectionRow } from "./find-connection.ts";

type Patch = Partial<
  Omit<ConnectionRow, "id" | "organizationId" | "environmentId" | "alias" | "revision" | "createdAt">
>;

/** Applies a change and increments the revision; the row must be locked by the caller. */
export async function bumpRevision(
  tx: Db,
  row: ConnectionRow,
  patch: Patch,
  now: Date,
): Promise<ConnectionRow> {
  const [next] = await tx
    .update(mcpConnections)
    .set({ ...patch, revision: sql`${mcpConnections.revision} + 1`, updatedAt: now })
    .where(and(eq(mcpConnections.id, row.id), eq(mcpConnections.revision, row.revision)))
    .returning();
  if (!next) throw new Error("locked connection row changed under its lock");
  return next;
}
