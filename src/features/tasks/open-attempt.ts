import { type SQL, sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import type { Db } from "../../db/client.ts";
import type { SnapshotConnection, SnapshotTool } from "../../db/schema/tasks.ts";
import { AppError } from "../../errors.ts";
import { gateRefusal } from "./gate-verdict.ts";

const p = (name: string) => sql.placeholder(name);

/**
 * The gate and the attempt's call record in one statement, so one round trip and one commit
 * stand between the model's call and the request leaving patchbay. The INSERT runs only when
 * the scoped connection row passes the gate; the row comes back either way, so a refusal can
 * say why. The attempt is written `ambiguous` ("sent, outcome not known yet") with a duration
 * of 0: if the worker dies at any point after this statement, that row is the honest record.
 * Casts pin the parameter types: INSERT … SELECT would otherwise resolve them as text.
 */
const statement: SQL = sql`
  with live as (
    select enabled, revision, approved_manifest_hash
    from mcp_connections
    where id = ${p("connectionId")}::text
      and organization_id = ${p("organizationId")}::text
      and environment_id = ${p("environmentId")}::uuid
  ), attempt as (
    insert into task_tool_calls
      (task_id, model_tool_name, connection_id, connection_revision, tool_name, started_at, duration_ms, outcome)
    select ${p("taskId")}::text, ${p("modelToolName")}::text, ${p("connectionId")}::text, live.revision,
      ${p("toolName")}::text, ${p("startedAt")}::timestamptz, 0, 'ambiguous'
    from live
    where live.enabled
      and live.revision = ${p("revision")}::integer
      and live.approved_manifest_hash = ${p("manifestHash")}::text
    returning id
  )
  select live.enabled, live.revision, live.approved_manifest_hash, attempt.id
  from live left join attempt on true`;

type Row = { enabled: boolean; revision: number; approvedManifestHash: string | null; callId: number | null };

const query = new PgDialect().sqlToQuery(statement);

/**
 * Prepared once per database handle (named, so PostgreSQL plans it once per connection). The
 * query builder cannot express a data-modifying CTE, so this goes one level down to the
 * session, exactly as the builder's own `.prepare()` does.
 */
const build = (db: Db) =>
  db._.session.prepareQuery<{ execute: Row[]; all: unknown; values: unknown }>(
    query,
    undefined,
    "task_call_attempt",
    true,
    (rows) =>
      rows.map(([enabled, revision, hash, id]) => ({
        enabled: enabled === true,
        revision: Number(revision),
        approvedManifestHash: hash === null ? null : String(hash),
        // bigserial: a string from postgres.js, a number or bigint from PGlite.
        callId: id === null || id === undefined ? null : Number(id),
      })),
  );

const prepared = new WeakMap<Db, ReturnType<typeof build>>();

/**
 * The fail-closed check before every call and the call's record, committed together before
 * anything leaves patchbay. Returns the call record's id, to be finished with the outcome
 * (`finishToolCalls`). A refusal writes nothing and throws `connection_changed`; the caller
 * records the refused call.
 */
export async function openAttempt(
  db: Db,
  args: {
    task: { id: string; organizationId: string; environmentId: string };
    frozen: SnapshotConnection;
    tool: Pick<SnapshotTool, "modelName" | "toolName">;
    startedAt: Date;
  },
): Promise<number> {
  let statement = prepared.get(db);
  if (!statement) {
    statement = build(db);
    prepared.set(db, statement);
  }
  const { task, frozen, tool } = args;
  const [row] = await statement.execute({
    connectionId: frozen.connectionId,
    organizationId: task.organizationId,
    environmentId: task.environmentId,
    taskId: task.id,
    modelToolName: tool.modelName,
    toolName: tool.toolName,
    startedAt: args.startedAt.toISOString(),
    revision: frozen.revision,
    manifestHash: frozen.manifestHash,
  });
  if (row?.callId != null) return row.callId;
  throw (
    gateRefusal(row, frozen) ??
    // The row passed the verdict yet nothing was inserted: cannot happen with the same
    // conditions on both sides; refusing keeps the gate closed if they ever diverge.
    new AppError(
      "connection_changed",
      `Connection "${frozen.alias}" could not be checked; start a new task.`,
      {
        connectionId: frozen.connectionId,
        nextAction: "start_new_task",
      },
    )
  );
}
