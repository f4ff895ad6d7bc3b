import { eq } from "drizzle-orm";
import type { Deps } from "../../deps.ts";
import { AppError, isAppError } from "../../errors.ts";
import {
  type SnapshotConnection,
  type SnapshotTool,
  type ToolCallOutcome,
  tasks,
  taskToolCalls,
} from "../../platform/db/schema/tasks.ts";
import type { RemoteSession } from "../../platform/mcp-client/remote-session.ts";
import { awaitCallDecision, requestCallApproval, useCallApproval } from "./call-approvals.ts";
import { recordUnsentCall } from "./call-record.ts";
import { ensureManifestMatches } from "./drift-check.ts";
import { checkGate, openAttempt, type RunningTask } from "./gate.ts";
import type { SessionPool } from "./session-pool.ts";
import { type NormalizedResult, normalizeResult, validateStructuredContent } from "./tool-result.ts";

/** What the model receives back: the normalised result (also for `isError`), or why there is none. */
export type ToolOutput = {
  outcome: ToolCallOutcome;
  result?: NormalizedResult;
  error?: string;
  message?: string;
  nextAction?: string;
};

/** Budget for one remote call; past it the call is ambiguous and is not retried. */
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;

type Args = {
  deps: Deps;
  task: RunningTask;
  tool: SnapshotTool;
  input: Record<string, unknown>;
  sessions: SessionPool;
  timeoutMs?: number;
  /**
   * Who decides on `write` calls: absent when no person is in reach (a remediation run, a task
   * an agent started), and every `write` call is then refused.
   */
  approvals?: { deadline: Date } | undefined;
};

/** A call's output; a refused call's row insert (never rejects). */
type Called = { output: ToolOutput; recorded?: Promise<void> };

/**
 * One call of a snapshot tool: first-use manifest check → gate and attempt record (one
 * committed statement) → exactly one remote attempt → bounded, normalised result. Every attempt
 * is recorded `ambiguous` before its request leaves patchbay; its outcome is written with the
 * step's other calls (`SessionPool.settle`), off the call's path. Refused calls are recorded too.
 * Nothing here retries: an ambiguous call is reported as such and the model (or a human) decides.
 */
export async function callSnapshotTool(args: Args): Promise<ToolOutput> {
  const call = attemptCall(args);
  args.sessions.track(call.then((c) => c.recorded));
  return (await call).output;
}

async function attemptCall(args: Args): Promise<Called> {
  const { deps, task, tool, sessions } = args;
  const startedAt = deps.clock();
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const frozen = task.snapshot.connections.find((c) => c.connectionId === tool.connectionId);
  const notSent = (outcome: "refused" | "error", error: AppError): Called => ({
    output: {
      outcome,
      error: error.code,
      message: error.message,
      ...(error.code === "connection_changed" || error.code === "manifest_changed"
        ? { nextAction: "start_new_task" }
        : {}),
    },
    recorded: recordUnsentCall(deps, {
      taskId: task.id,
      modelToolName: tool.modelName,
      connectionId: tool.connectionId,
      connectionRevision: frozen?.revision ?? null,
      toolName: tool.toolName,
      startedAt,
      durationMs: elapsed(),
      outcome,
      errorCode: error.code,
    }),
  });

  if (!frozen) {
    return notSent(
      "refused",
      new AppError("unknown_tool", `${tool.modelName} is not part of this task's snapshot.`),
    );
  }
  let session = sessions.checked(frozen.connectionId);
  if (!session) {
    // First call of this run to the connection: open its session and compare the live manifest.
    try {
      const live = await checkGate(deps.db, task, frozen);
      session = await sessions.get(live);
      await ensureManifestMatches({ db: deps.db, task, frozen, session, now: deps.clock() });
      sessions.markChecked(frozen.connectionId, session);
    } catch (error) {
      if (!isAppError(error)) throw error;
      const refused =
        error.code === "task_not_running" ||
        error.code === "connection_changed" ||
        error.code === "manifest_changed";
      // Otherwise opening the session or listing tools failed: the tool was never called.
      return notSent(refused ? "refused" : "error", error);
    }
  }

  let approval: Approved | undefined;
  if (tool.access !== "read") {
    const decided = await personDecides(args, frozen);
    if (decided instanceof AppError) return notSent("refused", decided);
    approval = decided;
  }

  let callId: number;
  try {
    callId = await openAttempt(deps.db, { task, frozen, tool, startedAt });
  } catch (error) {
    if (isAppError(error) && (error.code === "task_not_running" || error.code === "connection_changed")) {
      return notSent("refused", error);
    }
    throw error;
  }
  if (approval) await recordApprover(deps.db, callId, approval);
  const output = await callRemote(session, args);
  sessions.finished({
    id: callId,
    outcome: output.outcome,
    errorCode: output.error ?? null,
    durationMs: elapsed(),
  });
  return { output };
}

type Approved = { callApprovalId: string; decidedBy: string };

/**
 * A `write` call goes to a person first: a pending approval bound to exactly this call, waited
 * for within the task's time budget and then spent on this one call. Any other ending — nobody in
 * reach, a rejection, expiry, the task stopping or running out of time — is the refusal to tell
 * the model; nothing was sent.
 */
async function personDecides(args: Args, frozen: SnapshotConnection): Promise<Approved | AppError> {
  const { deps, task, tool, input } = args;
  if (!args.approvals) {
    return new AppError(
      "write_not_permitted",
      `${tool.modelName} may change the customer's system (its access class is write) and no person is in reach to approve the call; it was not made. Continue with the read tools.`,
    );
  }
  const pending = await requestCallApproval(deps, { task, frozen, tool, input });
  await markAwaiting(deps.db, task.id, pending);
  const decision = await awaitCallDecision(deps, {
    id: pending.id,
    taskId: task.id,
    deadline: args.approvals.deadline,
  }).finally(() => markAwaiting(deps.db, task.id, undefined));
  if (decision === "approved") {
    const used = await useCallApproval(deps.db, {
      id: pending.id,
      taskId: task.id,
      frozen,
      tool,
      input,
      now: deps.clock(),
    });
    if (used) return { callApprovalId: pending.id, decidedBy: used.decidedBy };
  }
  return decision === "rejected"
    ? new AppError(
        "call_rejected",
        `An owner or admin rejected this call of ${tool.modelName}; it was not made.`,
      )
    : decision === "expired"
      ? new AppError(
          "approval_expired",
          `Nobody approved this call of ${tool.modelName} in time; it was not made.`,
        )
      : new AppError(
          "approval_wait_ended",
          `The task stopped or ran out of time while this call of ${tool.modelName} waited for approval; it was not made.`,
        );
}

/** What the task's view shows while its agent waits for a person (cleared when the wait ends). */
async function markAwaiting(
  db: Deps["db"],
  taskId: string,
  pending: { id: string; connectionId: string; toolName: string; expiresAt: Date } | undefined,
): Promise<void> {
  await db
    .update(tasks)
    .set({
      awaitingCallApproval: pending
        ? {
            callApprovalId: pending.id,
            connectionId: pending.connectionId,
            toolName: pending.toolName,
            expiresAt: pending.expiresAt.toISOString(),
          }
        : null,
    })
    .where(eq(tasks.id, taskId));
}

/** The call record names the approval and who gave it, before the request leaves. */
async function recordApprover(db: Deps["db"], callId: number, approval: Approved): Promise<void> {
  await db
    .update(taskToolCalls)
    .set({ callApprovalId: approval.callApprovalId, approvedBy: approval.decidedBy })
    .where(eq(taskToolCalls.id, callId));
}

/** The one remote attempt, shaped for the model; a transport failure becomes an outcome. */
async function callRemote(
  session: RemoteSession,
  args: Args,
): Promise<ToolOutput & { outcome: "ok" | "error" | "ambiguous" }> {
  const { tool } = args;
  try {
    const result = await session.callTool(
      tool.toolName,
      args.input,
      args.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
    );
    const normalized = normalizeResult(result);
    const invalid = validateStructuredContent(tool, result.structuredContent);
    if (invalid) return { outcome: "error", error: "invalid_tool_result", message: invalid };
    if (normalized.isError) {
      return {
        outcome: "error",
        error: "tool_error",
        message: "The tool reported an error.",
        result: normalized,
      };
    }
    return { outcome: "ok", result: normalized };
  } catch (error) {
    if (!isAppError(error)) throw error;
    const ambiguous = error.details?.ambiguous === true;
    return {
      outcome: ambiguous ? "ambiguous" : "error",
      error: error.code,
      message: ambiguous
        ? `${error.message} The call may or may not have taken effect; patchbay does not retry it.`
        : error.message,
    };
  }
}
