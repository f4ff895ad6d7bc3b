import { asc, eq, getTableColumns, sql } from "drizzle-orm";
import { requirePermission, type ServiceContext } from "../../context.ts";
import { type Db, perDatabase } from "../../platform/db/client.ts";
import { readPage } from "../../platform/db/pagination.ts";
import { tasks, taskToolCalls } from "../../platform/db/schema/tasks.ts";
import { findEnvironment, findInEnvironment } from "../environments/index.ts";
import type { Task } from "./schemas.ts";

type TaskRef = { environmentId: string; taskId: string };

/** Tenancy gate for a task: the caller's organisation and exactly that environment, else 404. */
export const findTask = (db: Db, ctx: ServiceContext, ref: TaskRef, opts: { forUpdate?: boolean } = {}) =>
  findInEnvironment(db, ctx, tasks, { environmentId: ref.environmentId, id: ref.taskId, what: "Task" }, opts);

/**
 * The public view: the snapshot's summary without schemas (they can be large; `snapshotView`,
 * kept by PostgreSQL from the snapshot), never secrets.
 */
export const toTask = (row: Omit<typeof tasks.$inferSelect, "transcript" | "snapshot">): Task => ({
  id: row.id,
  environmentId: row.environmentId,
  kind: row.kind,
  instructions: row.instructions,
  status: row.status,
  errorCode: row.errorCode,
  errorMessage: row.errorMessage,
  summary: row.summary,
  snapshot: row.snapshotView,
  budgets: row.budgets,
  usage: row.usage,
  awaitingApproval: row.status === "running" ? row.awaitingCallApproval : null,
  nextStep:
    row.status === "running" && row.awaitingCallApproval
      ? `Approve or reject the agent's call of ${row.awaitingCallApproval.toolName} (call approval ${row.awaitingCallApproval.callApprovalId}) before ${row.awaitingCallApproval.expiresAt}: on its web page /call-approvals/${row.awaitingCallApproval.callApprovalId}, with \`patchbay environment task call-approvals ${row.id} --environment ${row.environmentId}\`, or POST …/tasks/${row.id}/call-approvals/${row.awaitingCallApproval.callApprovalId}/decision.`
      : null,
  createdAt: row.createdAt.toISOString(),
  startedAt: row.startedAt?.toISOString() ?? null,
  finishedAt: row.finishedAt?.toISOString() ?? null,
});

export async function getTask(args: { ctx: ServiceContext; input: TaskRef }): Promise<Task> {
  requirePermission(args.ctx, "tasks:read");
  return toTask(await findTask(args.ctx.deps.db, args.ctx, args.input));
}

export async function getTaskTranscript(args: {
  ctx: ServiceContext;
  input: TaskRef;
}): Promise<{ taskId: string; entries: Record<string, unknown>[] }> {
  requirePermission(args.ctx, "tasks:read");
  const row = await findTask(args.ctx.deps.db, args.ctx, args.input);
  return { taskId: row.id, entries: row.transcript };
}

/**
 * A list never shows transcripts (they grow with every step) nor whole snapshots (the tools'
 * schemas): it does not read them.
 */
const { transcript: _transcript, snapshot: _snapshot, ...listedColumns } = getTableColumns(tasks);

export async function listTasks(args: {
  ctx: ServiceContext;
  input: { environmentId: string; pageSize: number; cursor?: string | undefined };
}): Promise<{ items: Task[]; nextCursor: string | null }> {
  requirePermission(args.ctx, "tasks:read");
  const { ctx, input } = args;
  await findEnvironment(ctx.deps.db, ctx, input.environmentId);
  const scope = { environmentId: input.environmentId, organizationId: ctx.actor.organizationId };
  return readPage(ctx.deps.db, tasks, scope, input, toTask, listedColumns);
}

/** Built once per database handle with a placeholder: no SQL is built per request. */
const toolCallReads = perDatabase((db: Db) =>
  db
    .select()
    .from(taskToolCalls)
    .where(eq(taskToolCalls.taskId, sql.placeholder("taskId")))
    .orderBy(asc(taskToolCalls.id))
    .prepare("list_tool_calls"),
);

/** The task's call record, in call order. Bounded by the task's step budget. */
export async function listToolCalls(args: { ctx: ServiceContext; input: TaskRef }) {
  requirePermission(args.ctx, "tasks:read");
  const task = await findTask(args.ctx.deps.db, args.ctx, args.input);
  const rows = await toolCallReads(args.ctx.deps.db).execute({ taskId: task.id });
  return { items: rows.map((r) => ({ ...r, startedAt: r.startedAt.toISOString() })) };
}
