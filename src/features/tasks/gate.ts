import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { mcpConnections } from "../../db/schema/mcp-connections.ts";
import type { SnapshotConnection } from "../../db/schema/tasks.ts";
import { AppError } from "../../errors.ts";

export type LiveConnection = typeof mcpConnections.$inferSelect;

/**
 * The fail-closed check before every call (spec part 1A, task rule 2): the connection still
 * exists in the task's organisation and environment, is enabled, and its revision and approved
 * manifest hash are the ones the task froze. Any difference refuses the call before anything
 * leaves patchbay. One primary-key read.
 */
export async function checkGate(
  db: Db,
  scope: { organizationId: string; environmentId: string },
  frozen: SnapshotConnection,
): Promise<LiveConnection> {
  const [row] = await db
    .select()
    .from(mcpConnections)
    .where(
      and(
        eq(mcpConnections.id, frozen.connectionId),
        eq(mcpConnections.organizationId, scope.organizationId),
        eq(mcpConnections.environmentId, scope.environmentId),
      ),
    )
    .limit(1);
  const reason = !row
    ? "it was deleted"
    : !row.enabled
      ? "it was disabled"
      : row.approvedManifestHash !== frozen.manifestHash
        ? "its approved tools changed"
        : row.revision !== frozen.revision
          ? "its configuration changed"
          : undefined;
  if (!row || reason) {
    throw new AppError(
      "connection_changed",
      `Connection "${frozen.alias}" changed after this task started (${reason}); start a new task to use its current configuration.`,
      { connectionId: frozen.connectionId, nextAction: "start_new_task" },
    );
  }
  return row;
}
