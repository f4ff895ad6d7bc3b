import type { SnapshotTool, TaskSnapshot, ToolCallOutcome } from "../../db/schema/tasks.ts";
import type { Deps } from "../../deps.ts";
import { AppError, isAppError } from "../../errors.ts";
import { ensureManifestMatches } from "./drift-check.ts";
import { checkGate } from "./gate.ts";
import { type NormalizedResult, normalizeResult } from "./normalize-result.ts";
import { validateStructuredContent } from "./output-schema.ts";
import { recordToolCall } from "./record-tool-call.ts";
import type { SessionPool } from "./session-pool.ts";

export type RunningTask = {
  id: string;
  organizationId: string;
  environmentId: string;
  snapshot: TaskSnapshot;
};

/** What the model receives back: the normalised result, or a refusal it can act on. */
export type ToolOutput = {
  outcome: ToolCallOutcome;
  /** The remote answer (also for a tool that reported `isError`). */
  result?: NormalizedResult;
  /** Why there is no usable answer: a stable code, a message and what to do next. */
  error?: string;
  message?: string;
  nextAction?: string;
};

/** Budget for one remote call; past it the call is ambiguous and is not retried. */
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;

/**
 * One call of a snapshot tool: gate → first-use manifest check → exactly one remote attempt →
 * bounded, normalised result. Every attempt is recorded, refused ones included. Nothing here
 * retries: an ambiguous call is reported as such and the model (or a human) decides.
 */
export async function callSnapshotTool(args: {
  deps: Deps;
  task: RunningTask;
  tool: SnapshotTool;
  input: Record<string, unknown>;
  sessions: SessionPool;
  timeoutMs?: number;
}): Promise<ToolOutput> {
  const { deps, task, tool } = args;
  const startedAt = deps.clock();
  const started = performance.now();
  const frozen = task.snapshot.connections.find((c) => c.connectionId === tool.connectionId);
  const finish = async (output: ToolOutput, errorCode: string | null): Promise<ToolOutput> => {
    await recordToolCall(deps.db, {
      taskId: task.id,
      modelToolName: tool.modelName,
      connectionId: tool.connectionId,
      connectionRevision: frozen?.revision ?? null,
      toolName: tool.toolName,
      startedAt,
      durationMs: Math.round(performance.now() - started),
      outcome: output.outcome,
      errorCode,
    });
    return output;
  };
  const refused = (error: AppError) =>
    finish(
      {
        outcome: "refused",
        error: error.code,
        message: error.message,
        ...(error.code === "connection_changed" || error.code === "manifest_changed"
          ? { nextAction: "start_new_task" }
          : {}),
      },
      error.code,
    );

  if (!frozen)
    return refused(new AppError("unknown_tool", `${tool.modelName} is not part of this task's snapshot.`));

  let session: Awaited<ReturnType<SessionPool["get"]>>;
  try {
    const live = await checkGate(deps.db, task, frozen);
    session = await args.sessions.get(live);
    if (!args.sessions.matched.has(frozen.connectionId)) {
      await ensureManifestMatches({ db: deps.db, task, frozen, session, now: deps.clock() });
      args.sessions.matched.add(frozen.connectionId);
    }
  } catch (error) {
    if (!isAppError(error)) throw error;
    if (error.code === "connection_changed" || error.code === "manifest_changed") return refused(error);
    // Opening the session or listing tools failed: the tool itself was never called.
    return finish({ outcome: "error", error: error.code, message: error.message }, error.code);
  }

  try {
    const result = await session.callTool(
      tool.toolName,
      args.input,
      args.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
    );
    const normalized = normalizeResult(result);
    const invalid = validateStructuredContent(tool, result.structuredContent);
    if (invalid) {
      return finish(
        { outcome: "error", error: "invalid_tool_result", message: invalid },
        "invalid_tool_result",
      );
    }
    return normalized.isError
      ? finish(
          {
            outcome: "error",
            error: "tool_error",
            message: "The tool reported an error.",
            result: normalized,
          },
          "tool_error",
        )
      : finish({ outcome: "ok", result: normalized }, null);
  } catch (error) {
    if (!isAppError(error)) throw error;
    const ambiguous = error.details?.ambiguous === true;
    return finish(
      {
        outcome: ambiguous ? "ambiguous" : "error",
        error: error.code,
        message: ambiguous
          ? `${error.message} The call may or may not have taken effect; patchbay does not retry it.`
          : error.message,
      },
      error.code,
    );
  }
}
