/**
 * `bench:gate` support: bench-only variants of one snapshot-tool call, to say where the time of
 * `callSnapshotTool` goes and what a change would buy. None of them is patchbay's code path.
 *
 * - `splitCall`: the successful path of `callSnapshotTool`, step by step with the same verbs
 *   (checkGate → SessionPool.get → ensureManifestMatches → RemoteSession.callTool →
 *   normalizeResult + validateStructuredContent → recordToolCall), timed between steps.
 * - `whatIfCaller`: the same steps with the gate read and the record insert built once as
 *   drizzle prepared statements (as `findEnvironment` and `resolveApiKey` already are), and the
 *   first-use drift verdict remembered in memory once it is "match" (the stored verdict is
 *   insert-once, so it cannot change under a running task). The record is still written before
 *   the call returns. Optionally it goes through a pool whose sessions commit asynchronously
 *   (`synchronous_commit = off`): the row exists and is visible before the call returns, but a
 *   PostgreSQL crash can lose the last fraction of a second of records — a durability trade-off.
 * - `preparedGate`: the gate read prepared and without the manifest column.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../src/db/client.ts";
import { mcpConnections } from "../../src/db/schema/mcp-connections.ts";
import { type TaskSnapshot, taskToolCalls } from "../../src/db/schema/tasks.ts";
import { DEFAULT_CALL_TIMEOUT_MS } from "../../src/features/tasks/call-snapshot-tool.ts";
import { ensureManifestMatches } from "../../src/features/tasks/drift-check.ts";
import { checkGate, type LiveConnection } from "../../src/features/tasks/gate.ts";
import { normalizeResult } from "../../src/features/tasks/normalize-result.ts";
import { validateStructuredContent } from "../../src/features/tasks/output-schema.ts";
import { recordToolCall } from "../../src/features/tasks/record-tool-call.ts";
import type { SessionPool } from "../../src/features/tasks/session-pool.ts";
import type { GateBench } from "./gate-setup.ts";

/** Milliseconds spent in each step of one call. */
export type Split = {
  gate: number;
  session: number;
  driftCheck: number;
  remote: number;
  normalize: number;
  record: number;
  total: number;
};

export const SPLIT_STEPS = ["gate", "session", "driftCheck", "remote", "normalize", "record"] as const;

export async function splitCall(
  bench: GateBench,
  sessions: SessionPool,
  input: Record<string, unknown>,
): Promise<Split> {
  const { deps, task, tool, frozen } = bench;
  const startedAt = deps.clock();
  const t0 = performance.now();
  const live = await checkGate(deps.db, task, frozen);
  const t1 = performance.now();
  const session = await sessions.get(live);
  const t2 = performance.now();
  await ensureManifestMatches({ db: deps.db, task, frozen, session, now: deps.clock() });
  const t3 = performance.now();
  const result = await session.callTool(tool.toolName, input, DEFAULT_CALL_TIMEOUT_MS);
  const t4 = performance.now();
  const normalized = normalizeResult(result);
  const invalid = validateStructuredContent(tool, result.structuredContent);
  if (invalid || normalized.isError) throw new Error(`echo failed: ${invalid ?? normalized.text}`);
  const t5 = performance.now();
  await recordToolCall(deps.db, {
    taskId: task.id,
    modelToolName: tool.modelName,
    connectionId: tool.connectionId,
    connectionRevision: frozen.revision,
    toolName: tool.toolName,
    startedAt,
    durationMs: Math.round(performance.now() - t0),
    outcome: "ok",
    errorCode: null,
  });
  const t6 = performance.now();
  return {
    gate: t1 - t0,
    session: t2 - t1,
    driftCheck: t3 - t2,
    remote: t4 - t3,
    normalize: t5 - t4,
    record: t6 - t5,
    total: t6 - t0,
  };
}

const byScope = and(
  eq(mcpConnections.id, sql.placeholder("connectionId")),
  eq(mcpConnections.organizationId, sql.placeholder("organizationId")),
  eq(mcpConnections.environmentId, sql.placeholder("environmentId")),
);

/** `checkGate`'s primary-key read, whole row, as a prepared statement. */
const preparedGateRow = (db: Db) =>
  db.select().from(mcpConnections).where(byScope).limit(1).prepare("bench_task_gate_row");

/**
 * The gate read as it could be: prepared, and only the columns the verdict and opening a
 * session need. The whole row carries the approved manifest (every approved tool's
 * definition), which the task already has in its snapshot; reading and parsing it per call
 * grows with the approval.
 */
export const preparedGate = (db: Db) =>
  db
    .select({
      id: mcpConnections.id,
      organizationId: mcpConnections.organizationId,
      environmentId: mcpConnections.environmentId,
      endpointUrl: mcpConnections.endpointUrl,
      authKind: mcpConnections.authKind,
      authHeaderName: mcpConnections.authHeaderName,
      credentialVersion: mcpConnections.credentialVersion,
      credentialUpdatedAt: mcpConnections.credentialUpdatedAt,
      enabled: mcpConnections.enabled,
      revision: mcpConnections.revision,
      approvedManifestHash: mcpConnections.approvedManifestHash,
    })
    .from(mcpConnections)
    .where(byScope)
    .limit(1)
    .prepare("bench_task_gate");

const preparedRecord = (db: Db) =>
  db
    .insert(taskToolCalls)
    .values({
      taskId: sql.placeholder("taskId"),
      modelToolName: sql.placeholder("modelToolName"),
      connectionId: sql.placeholder("connectionId"),
      connectionRevision: sql.placeholder("connectionRevision"),
      toolName: sql.placeholder("toolName"),
      startedAt: sql.placeholder("startedAt"),
      durationMs: sql.placeholder("durationMs"),
      outcome: sql.placeholder("outcome"),
      errorCode: sql.placeholder("errorCode"),
    })
    .prepare("bench_record_tool_call");

/** `checkGate`'s verdict on a row read by the prepared statement (same conditions, same order). */
export function gateVerdict<
  Row extends Pick<LiveConnection, "enabled" | "approvedManifestHash" | "revision">,
>(row: Row | undefined, frozen: TaskSnapshot["connections"][number]): Row {
  if (!row?.enabled || row.approvedManifestHash !== frozen.manifestHash || row.revision !== frozen.revision) {
    throw new Error(`connection_changed: ${frozen.alias}`);
  }
  return row;
}

/** `recordDb`: where the record is written (default the service's own pool). */
export function whatIfCaller(bench: GateBench, sessions: SessionPool, recordDb: Db = bench.deps.db) {
  const { deps, task, tool, frozen } = bench;
  // The whole row, because `SessionPool.get` takes one (it only reads it on first use).
  const gate = preparedGateRow(deps.db);
  const record = preparedRecord(recordDb);
  const matched = new Set<string>();
  return async (input: Record<string, unknown>): Promise<void> => {
    const startedAt = deps.clock();
    const started = performance.now();
    const [row] = await gate.execute({
      connectionId: frozen.connectionId,
      organizationId: task.organizationId,
      environmentId: task.environmentId,
    });
    const live = gateVerdict(row, frozen);
    const session = await sessions.get(live);
    if (!matched.has(frozen.connectionId)) {
      await ensureManifestMatches({ db: deps.db, task, frozen, session, now: deps.clock() });
      matched.add(frozen.connectionId);
    }
    const result = await session.callTool(tool.toolName, input, DEFAULT_CALL_TIMEOUT_MS);
    const normalized = normalizeResult(result);
    const invalid = validateStructuredContent(tool, result.structuredContent);
    if (invalid || normalized.isError) throw new Error(`echo failed: ${invalid ?? normalized.text}`);
    await record.execute({
      taskId: task.id,
      modelToolName: tool.modelName,
      connectionId: tool.connectionId,
      connectionRevision: frozen.revision,
      toolName: tool.toolName,
      startedAt,
      durationMs: Math.round(performance.now() - started),
      outcome: "ok",
      errorCode: null,
    });
  };
}
