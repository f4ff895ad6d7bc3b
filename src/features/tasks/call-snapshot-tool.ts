import type { Deps } from "../../deps.ts";
import { AppError, isAppError } from "../../errors.ts";
import type { SnapshotTool, ToolCallOutcome } from "../../platform/db/schema/tasks.ts";
import type { RemoteSession } from "../../platform/mcp-client/remote-session.ts";
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

  let callId: number;
  try {
    callId = await openAttempt(deps.db, { task, frozen, tool, startedAt });
  } catch (error) {
    if (isAppError(error) && (error.code === "task_not_running" || error.code === "connection_changed")) {
      return notSent("refused", error);
    }
    throw error;
  }
  const output = await callRemote(session, args);
  sessions.finished({
    id: callId,
    outcome: output.outcome,
    errorCode: output.error ?? null,
    durationMs: elapsed(),
  });
  return { output };
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
