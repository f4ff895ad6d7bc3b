import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { mcpConnections } from "../../db/schema/mcp-connections.ts";
import type { SnapshotConnection } from "../../db/schema/tasks.ts";
import { AppError } from "../../errors.ts";

/**
 * What the gate reads: the checked fields plus what opening a session needs. Never the
 * approved manifest (the task has its frozen copy; reading it per call is wasted I/O).
 */
const columns = {
  id: mcpConnections.id,
  organizationId: mcpConnections.organizationId,
  environmentId: mcpConnections.environmentId,
  alias: mcpConnections.alias,
  enabled: mcpConnections.enabled,
  revision: mcpConnections.revision,
  approvedManifestHash: mcpConnections.approvedManifestHash,
  endpointUrl: mcpConnections.endpointUrl,
  authKind: mcpConnections.authKind,
  authHeaderName: mcpConnections.authHeaderName,
  credentialVersion: mcpConnections.credentialVersion,
  credentialUpdatedAt: mcpConnections.credentialUpdatedAt,
};

const buildRead = (db: Db) =>
  db
    .select(columns)
    .from(mcpConnections)
    .where(
      and(
        eq(mcpConnections.id, sql.placeholder("id")),
        eq(mcpConnections.organizationId, sql.placeholder("organizationId")),
        eq(mcpConnections.environmentId, sql.placeholder("environmentId")),
      ),
    )
    .limit(1)
    .prepare("task_gate");

/** One prepared statement per database handle: the gate runs before every call. */
const reads = new WeakMap<Db, ReturnType<typeof buildRead>>();

export type LiveConnection = Awaited<ReturnType<ReturnType<typeof buildRead>["execute"]>>[number];

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
  let read = reads.get(db);
  if (!read) {
    read = buildRead(db);
    reads.set(db, read);
  }
  const [row] = await read.execute({
    id: frozen.connectionId,
    organizationId: scope.organizationId,
    environmentId: scope.environmentId,
  });
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
