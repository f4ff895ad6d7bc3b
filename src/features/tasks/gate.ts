import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { mcpConnections } from "../../db/schema/mcp-connections.ts";
import type { SnapshotConnection } from "../../db/schema/tasks.ts";
import { gateRefusal } from "./gate-verdict.ts";

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
 * The gate's check as a plain read (see gate-verdict.ts), for a task's first call to a
 * connection: that call opens the session from the row and checks the manifest before
 * `openAttempt` checks again and records the attempt. One primary-key read.
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
  const refusal = gateRefusal(row, frozen);
  if (!row || refusal) throw refusal;
  return row;
}
