import { type SQL, sql } from "drizzle-orm";
import type { Deps } from "../../deps.ts";
import { type Db, perDatabase } from "../../platform/db/client.ts";
import { type ToolCallOutcome, taskToolCalls } from "../../platform/db/schema/tasks.ts";
import { webhookOutboxInsert } from "../webhooks/index.ts";

type Entry = {
  taskId: string;
  modelToolName: string;
  connectionId: string | null;
  connectionRevision: number | null;
  toolName: string;
  startedAt: Date;
  durationMs: number;
  outcome: ToolCallOutcome;
  errorCode: string | null;
};

const buildInsert = (db: Db) =>
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
    .prepare("record_tool_call");

/** One prepared statement per database handle: a record is written for every call. */
const inserts = perDatabase(buildInsert);

/** One row of the call record; calls that run are recorded by the gate's attempt instead. */
export async function recordToolCall(db: Db, entry: Entry): Promise<void> {
  await inserts(db).execute(entry);
}

/**
 * A call that never reached its tool (refused, or failed before it was sent), recorded after the
 * decision: the answer to the model stands whether or not its row is written, so a failure is
 * logged, never thrown.
 */
export async function recordUnsentCall(deps: Pick<Deps, "db" | "logger">, entry: Entry): Promise<void> {
  try {
    await recordToolCall(deps.db, entry);
    if (entry.outcome === "error" && entry.connectionId && entry.errorCode) {
      await recordConnectionFailure(deps.db, {
        connectionId: entry.connectionId,
        at: new Date(entry.startedAt.getTime() + entry.durationMs),
        code: entry.errorCode,
      });
    }
  } catch (err) {
    deps.logger.warn(
      { err, taskId: entry.taskId, tool: entry.modelToolName },
      "a tool call that was not sent was not recorded",
    );
  }
}

export type FinishedCall = {
  id: number;
  outcome: Exclude<ToolCallOutcome, "refused">;
  errorCode: string | null;
  durationMs: number;
};

const p = (name: string) => sql.placeholder(name);

const finished = sql`unnest(${p("ids")}::bigint[], ${p("outcomes")}::text[], ${p("errorCodes")}::text[], ${p("durations")}::integer[]) as v(id, outcome, error_code, duration_ms)`;

/**
 * The connection-health half of writing outcomes, as CTEs in front of the same statement (no
 * extra round trip on the call path). `health_calls` is each answered call's connection, end time
 * (start + duration), whether the remote answered (`ok`, or the tool's own error) and its code.
 * Per connection: the latest success and failure, failures after the batch's last success, and
 * the batch's latest call. `credential_rejected_at` is set by a 401/403 (`remote_auth_failed`)
 * that is the batch's latest call, kept while it stays set, cleared by a later success; the
 * statement that sets it (the new value equals this batch's time) emits
 * `connection.credential_rejected` once, through the webhook outbox.
 */
function healthCtes(db: Db, calls: SQL) {
  const healthCalls = db.$with("health_calls", {}).as(calls);
  const healthAgg = db.$with("health_agg", {}).as(sql`
    select c.connection_id,
           max(c.at) filter (where c.ok) as last_ok,
           max(c.at) filter (where not c.ok) as last_fail,
           (array_agg(c.code order by c.at desc) filter (where not c.ok))[1] as fail_code,
           count(*) filter (where not c.ok)::integer as fails,
           (select count(*)::integer from health_calls d
             where d.connection_id = c.connection_id and not d.ok
               and d.at > coalesce(max(c.at) filter (where c.ok), '-infinity')) as fails_after_ok,
           (array_agg(c.ok order by c.at desc))[1] as latest_ok,
           (array_agg(c.code order by c.at desc))[1] as latest_code,
           max(c.at) as latest_at
      from health_calls c group by c.connection_id`);
  const healthUpdate = db.$with("health_update", {}).as(sql`
    update mcp_connections m set
      last_success_at = greatest(m.last_success_at, a.last_ok),
      last_failure_at = greatest(m.last_failure_at, a.last_fail),
      last_failure_code = case when a.last_fail >= coalesce(m.last_failure_at, '-infinity')
                               then a.fail_code else m.last_failure_code end,
      consecutive_failures = case when a.last_ok is not null then a.fails_after_ok
                                  else m.consecutive_failures + a.fails end,
      credential_rejected_at = case
        when a.latest_ok then null
        when a.latest_code = 'remote_auth_failed' then coalesce(m.credential_rejected_at, a.latest_at)
        else m.credential_rejected_at end
      from health_agg a
     where m.id = a.connection_id
    returning m.id, m.organization_id, m.environment_id, m.alias, m.display_name, m.endpoint_origin,
              m.auth_kind, m.credential_rejected_at,
              (not a.latest_ok and a.latest_code = 'remote_auth_failed'
               and m.credential_rejected_at = a.latest_at) as newly_rejected`);
  const healthEvents = db.$with("health_events", {}).as(
    webhookOutboxInsert({
      type: "connection.credential_rejected",
      source: "health_update",
      where: sql`s.newly_rejected`,
      data: sql`jsonb_build_object('organizationId', s.organization_id, 'environmentId', s.environment_id,
        'connectionId', s.id, 'alias', s.alias, 'displayName', s.display_name,
        'endpointOrigin', s.endpoint_origin, 'authKind', s.auth_kind,
        'rejectedAt', to_char(s.credential_rejected_at at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`,
    }),
  );
  return [healthCalls, healthAgg, healthUpdate, healthEvents] as const;
}

// Failure: the remote did not answer, timed out, refused the request or answered wrongly. A tool
// that reports its own error (`tool_error`) was reached: that is a success of the connection.
const answered = (outcome: string, code: string) => sql.raw(`(${outcome} = 'ok' or ${code} = 'tool_error')`);

// One statement for any number of rows (arrays, unnested), so it is prepared once.
const buildUpdate = (db: Db) =>
  db
    .with(
      ...healthCtes(
        db,
        sql`select t.connection_id, t.started_at + v.duration_ms * interval '1 millisecond' as at,
                   ${answered("v.outcome", "v.error_code")} as ok, v.error_code as code
              from ${finished} join task_tool_calls t on t.id = v.id
             where t.connection_id is not null`,
      ),
    )
    .update(taskToolCalls)
    .set({ outcome: sql`v.outcome`, errorCode: sql`v.error_code`, durationMs: sql`v.duration_ms` })
    .from(finished)
    .where(sql`${taskToolCalls.id} = v.id`)
    .prepare("finish_tool_calls");

/** Health of calls that failed before their tool was called (opening the session failed). */
const buildHealth = (db: Db) =>
  db
    .with(
      ...healthCtes(
        db,
        // Times travel as text: postgres-js would serialise a timestamptz[] parameter's elements
        // as Dates, and they are ISO strings here.
        sql`select h.connection_id, h.at::timestamptz as at, false as ok, h.code
              from unnest(${p("connectionIds")}::text[], ${p("ats")}::text[], ${p("codes")}::text[])
                   as h(connection_id, at, code)`,
      ),
    )
    .select({ n: sql<number>`1` })
    .from(sql`(select 1) as one`)
    .prepare("record_connection_failures");

const healthUpdates = perDatabase(buildHealth);

/**
 * A call that failed while opening its connection's session (nothing reached the tool) counts
 * against the connection's health too; off the call path, best-effort like its record.
 */
async function recordConnectionFailure(
  db: Db,
  failure: { connectionId: string; at: Date; code: string },
): Promise<void> {
  await healthUpdates(db).execute({
    connectionIds: [failure.connectionId],
    ats: [failure.at.toISOString()],
    codes: [failure.code],
  });
}

const updates = perDatabase(buildUpdate);

/**
 * Finishes attempts' call records (`openAttempt`) with what came back, in one statement. Until
 * this commits a row says `ambiguous`, which is also what it keeps if the worker stops first.
 */
export async function finishToolCalls(db: Db, calls: FinishedCall[]): Promise<void> {
  if (calls.length === 0) return;
  await updates(db).execute({
    ids: calls.map((c) => c.id),
    outcomes: calls.map((c) => c.outcome),
    errorCodes: calls.map((c) => c.errorCode),
    durations: calls.map((c) => c.durationMs),
  });
}
