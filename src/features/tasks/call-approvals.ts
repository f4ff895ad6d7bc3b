import canonicalize from "canonicalize";
import { and, asc, eq, gt, sql } from "drizzle-orm";
import {
  requireOwnerOrAdmin,
  requirePermission,
  type ServiceContext,
  withTransaction,
} from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import { type Db, perDatabase } from "../../platform/db/client.ts";
import {
  type SnapshotConnection,
  type SnapshotTool,
  taskCallApprovals,
  tasks,
} from "../../platform/db/schema/tasks.ts";
import { sha256 } from "../../platform/mcp-client/tool-hash.ts";
import { findTask } from "./read-tasks.ts";
import type { CallApproval } from "./schemas.ts";

/** How long a person has to decide on a `write` call (the task's own time budget may end it sooner). */
export const CALL_APPROVAL_TTL_MS = 15 * 60_000;
/** How often a waiting call looks at its approval: a person's decision needs no faster answer. */
const DECISION_POLL_MS = 250;

type Row = typeof taskCallApprovals.$inferSelect;
type TaskScope = { id: string; organizationId: string; environmentId: string };

/** The public view; a pending approval past its expiry shows as `expired` (never stored). */
export const toCallApproval = (row: Row, now: Date, baseUrl: string): CallApproval => {
  const state = row.state === "pending" && row.expiresAt <= now ? "expired" : row.state;
  return {
    id: row.id,
    taskId: row.taskId,
    connectionId: row.connectionId,
    connectionRevision: row.connectionRevision,
    toolName: row.toolName,
    modelToolName: row.modelToolName,
    arguments: row.arguments,
    state,
    requestedAt: row.requestedAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
    decidedBy: row.decidedBy,
    decidedAt: row.decidedAt?.toISOString() ?? null,
    usedAt: row.usedAt?.toISOString() ?? null,
    url: state === "pending" ? `${baseUrl}/call-approvals/${row.id}` : null,
  };
};

/** RFC 8785 text of the arguments, hashed: what an approval is bound to besides the call's target. */
export const hashArguments = (input: Record<string, unknown>): string =>
  sha256(canonicalize(input) ?? "null");

/** The runtime asks a person about one `write` call: a pending approval bound to exactly it. */
export async function requestCallApproval(
  deps: Pick<Deps, "db" | "clock">,
  args: { task: TaskScope; frozen: SnapshotConnection; tool: SnapshotTool; input: Record<string, unknown> },
): Promise<Row> {
  const now = deps.clock();
  const [row] = await deps.db
    .insert(taskCallApprovals)
    .values({
      id: newId("cap"),
      organizationId: args.task.organizationId,
      environmentId: args.task.environmentId,
      taskId: args.task.id,
      connectionId: args.frozen.connectionId,
      connectionRevision: args.frozen.revision,
      toolName: args.tool.toolName,
      modelToolName: args.tool.modelName,
      arguments: args.input,
      argumentsHash: hashArguments(args.input),
      requestedAt: now,
      expiresAt: new Date(now.getTime() + CALL_APPROVAL_TTL_MS),
    })
    .returning();
  if (!row) throw new Error("inserting a call approval returned no row");
  return row;
}

export type CallDecision = "approved" | "rejected" | "expired" | "stopped" | "out_of_time";

/**
 * Waits for a person's decision on a pending approval: `approved` or `rejected`; `expired` when
 * nobody decided in time; `stopped` when the task ended or its cancellation was requested;
 * `out_of_time` at `deadline` (the task's time budget). Reads the row, so a decision made
 * through any instance, and a database blip, are both just the next look.
 */
export async function awaitCallDecision(
  deps: Pick<Deps, "db" | "clock">,
  args: { id: string; taskId: string; deadline: Date; pollMs?: number },
): Promise<CallDecision> {
  for (;;) {
    const [row] = await deps.db
      .select({
        state: taskCallApprovals.state,
        expiresAt: taskCallApprovals.expiresAt,
        taskStatus: tasks.status,
        cancelRequestedAt: tasks.cancelRequestedAt,
      })
      .from(taskCallApprovals)
      .innerJoin(tasks, eq(tasks.id, taskCallApprovals.taskId))
      .where(and(eq(taskCallApprovals.id, args.id), eq(taskCallApprovals.taskId, args.taskId)));
    if (row?.taskStatus !== "running" || row.cancelRequestedAt) return "stopped";
    if (row.state === "approved" || row.state === "rejected") return row.state;
    if (row.state === "used") return "stopped";
    const now = deps.clock().getTime();
    if (now >= row.expiresAt.getTime()) return "expired";
    if (now >= args.deadline.getTime()) return "out_of_time";
    const left = Math.min(row.expiresAt.getTime(), args.deadline.getTime()) - now;
    await new Promise((resolve) => setTimeout(resolve, Math.min(args.pollMs ?? DECISION_POLL_MS, left)));
  }
}

/**
 * Spends an approval on the one call it allows: `approved` → `used`, only while it is bound to
 * exactly this task, connection, revision, tool and arguments. Returns who approved, or
 * undefined when it does not allow this call (other arguments, used already, never approved).
 */
export async function useCallApproval(
  db: Db,
  args: {
    id: string;
    taskId: string;
    frozen: SnapshotConnection;
    tool: SnapshotTool;
    input: Record<string, unknown>;
    now: Date;
  },
): Promise<{ decidedBy: string } | undefined> {
  const [used] = await db
    .update(taskCallApprovals)
    .set({ state: "used", usedAt: args.now })
    .where(
      and(
        eq(taskCallApprovals.id, args.id),
        eq(taskCallApprovals.state, "approved"),
        eq(taskCallApprovals.taskId, args.taskId),
        eq(taskCallApprovals.connectionId, args.frozen.connectionId),
        eq(taskCallApprovals.connectionRevision, args.frozen.revision),
        eq(taskCallApprovals.toolName, args.tool.toolName),
        eq(taskCallApprovals.argumentsHash, hashArguments(args.input)),
      ),
    )
    .returning({ decidedBy: taskCallApprovals.decidedBy });
  return used?.decidedBy ? { decidedBy: used.decidedBy } : undefined;
}

type TaskRef = { environmentId: string; taskId: string };

/** Built once per database handle with a placeholder: no SQL is built per request. */
const callApprovalReads = perDatabase((db: Db) =>
  db
    .select()
    .from(taskCallApprovals)
    .where(eq(taskCallApprovals.taskId, sql.placeholder("taskId")))
    .orderBy(asc(taskCallApprovals.requestedAt), asc(taskCallApprovals.id))
    .limit(1000)
    .prepare("list_call_approvals"),
);

/** A task's call approvals, oldest first (a task asks for a handful at most: bounded by its steps). */
export async function listCallApprovals(args: {
  ctx: ServiceContext;
  input: TaskRef;
}): Promise<{ items: CallApproval[] }> {
  requirePermission(args.ctx, "tasks:read");
  const { ctx, input } = args;
  const task = await findTask(ctx.deps.db, ctx, input);
  const rows = await callApprovalReads(ctx.deps.db).execute({ taskId: task.id });
  const now = ctx.deps.clock();
  return { items: rows.map((row) => toCallApproval(row, now, ctx.deps.config.baseUrl)) };
}

/**
 * An owner or admin approves or rejects one pending `write` call of a task in their own
 * organisation and environment. Decided once: a second decision, or one after expiry, is refused.
 */
export async function decideCallApproval(args: {
  ctx: ServiceContext;
  input: TaskRef & { callApprovalId: string; decision: "approve" | "reject" };
}): Promise<CallApproval> {
  const member = requireOwnerOrAdmin(args.ctx, "tasks:manage");
  const { ctx, input } = args;
  return withTransaction(ctx, async (tx) => {
    const task = await findTask(tx, ctx, input);
    const now = ctx.deps.clock();
    const state = input.decision === "approve" ? "approved" : "rejected";
    const [decided] = await tx
      .update(taskCallApprovals)
      .set({ state, decidedBy: member.userId, decidedAt: now })
      .where(
        and(
          eq(taskCallApprovals.id, input.callApprovalId),
          eq(taskCallApprovals.taskId, task.id),
          eq(taskCallApprovals.state, "pending"),
          gt(taskCallApprovals.expiresAt, now),
        ),
      )
      .returning();
    if (!decided) {
      const [row] = await tx
        .select()
        .from(taskCallApprovals)
        .where(and(eq(taskCallApprovals.id, input.callApprovalId), eq(taskCallApprovals.taskId, task.id)));
      if (!row)
        throw new AppError("not_found", `Call approval ${input.callApprovalId} was not found on this task.`);
      const view = toCallApproval(row, now, ctx.deps.config.baseUrl);
      if (view.state === "expired") {
        throw new AppError(
          "approval_expired",
          "This call approval expired; the agent was told and went on without the call.",
        );
      }
      throw new AppError("approval_not_pending", `This call approval is already ${view.state}.`, {
        state: view.state,
      });
    }
    await recordAudit(tx, ctx, {
      action: state === "approved" ? "task.call_approved" : "task.call_rejected",
      targetType: "task",
      targetId: task.id,
      environmentId: task.environmentId,
      details: {
        callApprovalId: decided.id,
        connectionId: decided.connectionId,
        connectionRevision: decided.connectionRevision,
        toolName: decided.toolName,
        argumentsHash: decided.argumentsHash,
      },
    });
    return toCallApproval(decided, now, ctx.deps.config.baseUrl);
  });
}

/** One approval of a task in the caller's organisation and environment (404 otherwise). */
export async function getCallApproval(args: {
  ctx: ServiceContext;
  input: TaskRef & { callApprovalId: string };
}): Promise<CallApproval> {
  requirePermission(args.ctx, "tasks:read");
  const { ctx, input } = args;
  const task = await findTask(ctx.deps.db, ctx, input);
  const [row] = await ctx.deps.db
    .select()
    .from(taskCallApprovals)
    .where(and(eq(taskCallApprovals.id, input.callApprovalId), eq(taskCallApprovals.taskId, task.id)));
  if (!row)
    throw new AppError("not_found", `Call approval ${input.callApprovalId} was not found on this task.`);
  return toCallApproval(row, ctx.deps.clock(), ctx.deps.config.baseUrl);
}

/**
 * Where an approval lives, for the web page its `url` names (which carries no organisation):
 * the caller is then checked against that organisation like anywhere else.
 */
export async function locateCallApproval(args: {
  db: Db;
  input: { callApprovalId: string };
}): Promise<{ organizationId: string; environmentId: string; taskId: string } | undefined> {
  if (!/^cap_[0-9a-z]{24}$/.test(args.input.callApprovalId)) return undefined;
  const [row] = await args.db
    .select({
      organizationId: taskCallApprovals.organizationId,
      environmentId: taskCallApprovals.environmentId,
      taskId: taskCallApprovals.taskId,
    })
    .from(taskCallApprovals)
    .where(eq(taskCallApprovals.id, args.input.callApprovalId))
    .limit(1);
  return row;
}
