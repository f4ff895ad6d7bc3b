import { type SQL, sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { AppError } from "../../errors.ts";
import { type Db, perDatabase } from "../../platform/db/client.ts";
import { mcpConnections as live } from "../../platform/db/schema/mcp-connections.ts";
import {
  type SnapshotConnection,
  type SnapshotTool,
  type TaskSnapshot,
  tasks,
} from "../../platform/db/schema/tasks.ts";

/** A task as the runtime runs it: its tenancy and the connections and tools it froze. */
export type RunningTask = {
  id: string;
  organizationId: string;
  environmentId: string;
  snapshot: TaskSnapshot;
};

type TaskScope = Pick<RunningTask, "id" | "organizationId" | "environmentId">;

const p = (name: string) => sql.placeholder(name);

/**
 * The task rule (spec part 1A), written once for the runtime's own tools (`openOwnAttempt`) and
 * customer tools (the first of `RULES`): a call is made only while its task is `running` and
 * nobody asked to cancel it, so a cancellation mid-step stops the step's remaining calls at once
 * and a task that ended (a model still answering, a stale run) makes none.
 */
const taskRunning = sql`${tasks.status} = 'running' and ${tasks.cancelRequestedAt} is null`;

const taskNotRunning = () =>
  new AppError(
    "task_not_running",
    "This task is no longer running (it ended or its cancellation was requested); this call was not made.",
  );

const connectionChanged = (frozen: SnapshotConnection, reason: string) =>
  new AppError(
    "connection_changed",
    `Connection "${frozen.alias}" changed after this task started (${reason}); start a new task to use its current configuration.`,
    { connectionId: frozen.connectionId, nextAction: "start_new_task" },
  );

/**
 * The gate's rules for a customer call (spec part 1A, task rule 2): the task rule, then the
 * connection is still the one the task froze. Each rule is SQL over the task's row and the live
 * `mcp_connections` row joined to it, read in the task's organisation and environment only (a row
 * outside them counts as deleted); the first rule that does not hold names the refusal. A stopped
 * task is refused first, whatever its connections became: the model must stop, not start a new
 * task. Both statements below (the plain read and the one that records the attempt) evaluate this
 * same SQL, so they cannot disagree and a rule is added here alone.
 */
const scope = sql`${live.id} = ${p("connectionId")}
  and ${live.organizationId} = ${p("organizationId")}
  and ${live.environmentId} = ${p("environmentId")}`;
const RULES: { refuse: (frozen: SnapshotConnection) => AppError; holds: SQL }[] = [
  { refuse: taskNotRunning, holds: taskRunning },
  { refuse: (f) => connectionChanged(f, "it was deleted"), holds: sql`${live.id} is not null` },
  { refuse: (f) => connectionChanged(f, "it was disabled"), holds: sql`${live.enabled}` },
  {
    refuse: (f) => connectionChanged(f, "its approved tools changed"),
    holds: sql`${live.approvedManifestHash} = ${p("manifestHash")}::text`,
  },
  {
    refuse: (f) => connectionChanged(f, "its configuration changed"),
    holds: sql`${live.revision} = ${p("revision")}::integer`,
  },
];

/**
 * The index in `RULES` of the first rule that does not hold, or null when all hold. `is not
 * true` also refuses a rule that evaluates to NULL (a connection never approved): fail closed.
 */
const refusal = sql<number | null>`case ${sql.join(
  RULES.map((rule, i) => sql`when (${rule.holds}) is not true then ${sql.raw(String(i))}`),
  sql` `,
)} end`;

const gateParams = (task: TaskScope, frozen: SnapshotConnection) => ({
  ...frozen,
  taskId: task.id,
  organizationId: task.organizationId,
  environmentId: task.environmentId,
});

/** The gate's refusal: no task row at all (deleted with its environment) fails the task rule. */
function refused(verdict: { refusal: number | null } | undefined, frozen: SnapshotConnection): AppError {
  if (!verdict) return taskNotRunning();
  const rule = verdict.refusal === null ? undefined : RULES[verdict.refusal];
  // Only asked about a call that did not pass: a verdict naming no rule still refuses.
  return rule ? rule.refuse(frozen) : connectionChanged(frozen, "it could not be checked");
}

/** What opening a session needs; never the approved manifest (the task has its frozen copy). */
const columns = {
  id: live.id,
  organizationId: live.organizationId,
  environmentId: live.environmentId,
  alias: live.alias,
  enabled: live.enabled,
  revision: live.revision,
  approvedManifestHash: live.approvedManifestHash,
  endpointUrl: live.endpointUrl,
  authKind: live.authKind,
  authHeaderName: live.authHeaderName,
  credentialVersion: live.credentialVersion,
  credentialUpdatedAt: live.credentialUpdatedAt,
};

// Read from the task's row so that a stopped task is refused even when its connection is gone;
// the left join makes a missing connection the "deleted" rule's NULL, not a missing row.
const buildRead = (db: Db) =>
  db
    .select({ refusal, connection: columns })
    .from(tasks)
    .leftJoin(live, scope)
    .where(sql`${tasks.id} = ${p("taskId")}`)
    .limit(1)
    .prepare("task_gate");

const reads = perDatabase(buildRead);

export type LiveConnection = NonNullable<
  Awaited<ReturnType<ReturnType<typeof buildRead>["execute"]>>[number]["connection"]
>;

/**
 * The gate as a plain read, for a task's first call to a connection: that call opens the
 * session from the row and checks the manifest before `openAttempt` checks again and records
 * the attempt. A refusal throws `task_not_running` or `connection_changed`.
 */
export async function checkGate(
  db: Db,
  task: TaskScope,
  frozen: SnapshotConnection,
): Promise<LiveConnection> {
  const [row] = await reads(db).execute(gateParams(task, frozen));
  if (!row || row.refusal !== null || !row.connection) throw refused(row, frozen);
  return row.connection;
}

/**
 * A raw statement prepared once per database handle (named, so PostgreSQL plans it once per
 * connection). The query builder cannot express these INSERT … SELECTs, so they go one level
 * down to the session, exactly as the builder's own `.prepare()` does. Casts pin the parameter
 * types: INSERT … SELECT would otherwise resolve them as text.
 */
const prepareRaw = <R>(name: string, query: SQL, map: (rows: unknown[][]) => R[]) =>
  perDatabase((db: Db) =>
    db._.session.prepareQuery<{ execute: R[]; all: unknown; values: unknown }>(
      new PgDialect().sqlToQuery(query),
      undefined,
      name,
      true,
      map,
    ),
  );

/** bigserial: a string from postgres.js, a number or bigint from PGlite. */
const toNumber = (value: unknown) => (value === null || value === undefined ? null : Number(value));

/**
 * The gate and the attempt's call record in one statement, so one round trip and one commit
 * stand between the model's call and the request leaving patchbay. The INSERT runs only when
 * every rule passes; the verdict comes back either way, so a refusal can say why. The attempt is
 * written `ambiguous` ("sent, outcome not known yet") with a duration of 0: if the worker dies at
 * any point after this statement, that row is the honest record.
 */
const attempts = prepareRaw(
  "task_call_attempt",
  sql`
  with gate as (
    select ${refusal} as refusal, ${live.revision} as revision
    from ${tasks} left join ${live} on ${scope}
    where ${tasks.id} = ${p("taskId")}::text
  ), attempt as (
    insert into task_tool_calls
      (task_id, model_tool_name, connection_id, connection_revision, tool_name, started_at, duration_ms, outcome)
    select ${p("taskId")}::text, ${p("modelToolName")}::text, ${p("connectionId")}::text, gate.revision,
      ${p("toolName")}::text, ${p("startedAt")}::timestamptz, 0, 'ambiguous'
    from gate
    where gate.refusal is null
    returning id
  )
  select gate.refusal, attempt.id
  from gate left join attempt on true`,
  (rows) => rows.map(([refusal, id]) => ({ refusal: toNumber(refusal), callId: toNumber(id) })),
);

/**
 * The fail-closed check before every call and the call's record, committed together before
 * anything leaves patchbay. Returns the call record's id, to be finished with the outcome
 * (`finishToolCalls`). A refusal writes nothing and throws `task_not_running` or
 * `connection_changed`; the caller records the refused call.
 */
export async function openAttempt(
  db: Db,
  args: {
    task: TaskScope;
    frozen: SnapshotConnection;
    tool: Pick<SnapshotTool, "modelName" | "toolName">;
    startedAt: Date;
  },
): Promise<number> {
  const { task, frozen, tool } = args;
  const [row] = await attempts(db).execute({
    ...gateParams(task, frozen),
    modelToolName: tool.modelName,
    toolName: tool.toolName,
    startedAt: args.startedAt.toISOString(),
  });
  if (row?.callId != null) return row.callId;
  throw refused(row, frozen);
}

/**
 * The runtime's own tools (`finish`, a remediation's built-in tools) have no connection, so only
 * the task rule gates them: the call's row is inserted `ambiguous` only while it holds, committed
 * before the tool runs.
 */
const ownAttempts = prepareRaw(
  "task_own_call_attempt",
  sql`
  insert into task_tool_calls (task_id, model_tool_name, tool_name, started_at, duration_ms, outcome)
  select ${tasks.id}, ${p("modelToolName")}::text, ${p("toolName")}::text,
    ${p("startedAt")}::timestamptz, 0, 'ambiguous'
  from ${tasks}
  where ${tasks.id} = ${p("taskId")}::text and ${taskRunning}
  returning id`,
  (rows) => rows.map(([id]) => Number(id)),
);

/**
 * `openAttempt` for one of the runtime's own tools: returns the call record's id, or writes
 * nothing and throws `task_not_running`; the caller records the refused call.
 */
export async function openOwnAttempt(
  db: Db,
  args: { taskId: string; toolName: string; startedAt: Date },
): Promise<number> {
  const [id] = await ownAttempts(db).execute({
    taskId: args.taskId,
    modelToolName: args.toolName,
    toolName: args.toolName,
    startedAt: args.startedAt.toISOString(),
  });
  if (id === undefined) throw taskNotRunning();
  return id;
}
