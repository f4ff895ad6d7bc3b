import { jsonSchema, type Tool, type ToolExecutionOptions } from "ai";
import type { Deps } from "../../deps.ts";
import { isAppError } from "../../errors.ts";
import { recordUnsentCall } from "./call-record.ts";
import { callSnapshotTool, type ToolOutput } from "./call-snapshot-tool.ts";
import { openOwnAttempt, type RunningTask } from "./gate.ts";
import type { SessionPool } from "./session-pool.ts";

/** A stopped run makes no more calls, even when its model still answers (nothing ran: no record). */
const stopped = (options: ToolExecutionOptions): ToolOutput | undefined =>
  options.abortSignal?.aborted
    ? { outcome: "refused", error: "run_stopped", message: "The run has stopped; this call was not made." }
    : undefined;

/** The task's frozen customer tools, each routed through the per-call gate (`callSnapshotTool`). */
export function snapshotTools(
  deps: Deps,
  task: RunningTask,
  sessions: SessionPool,
  approvals: { deadline: Date } | undefined,
): Record<string, Tool> {
  return Object.fromEntries(
    task.snapshot.tools.map((t) => [
      t.modelName,
      {
        description: [t.title, t.description].filter(Boolean).join(" — ") || t.toolName,
        inputSchema: jsonSchema(t.inputSchema),
        execute: async (input: unknown, options: ToolExecutionOptions) =>
          stopped(options) ??
          callSnapshotTool({
            deps,
            task,
            tool: t,
            input: (input ?? {}) as Record<string, unknown>,
            sessions,
            approvals,
          }),
      } satisfies Tool,
    ]),
  );
}

/**
 * The runtime's own tools (`finish`, a remediation's workspace and evidence tools): only the task
 * rule gates them (`openOwnAttempt`), with the same call record as a customer tool. A result
 * `{ outcome: "error", error }` is recorded as an error with that code; a throw as `internal`; a
 * call the gate refuses as `refused`, and the model is told why.
 */
export function ownTools(
  deps: Deps,
  task: RunningTask,
  sessions: SessionPool,
  tools: Record<string, Tool>,
): Record<string, Tool> {
  return Object.fromEntries(
    Object.entries(tools).map(([name, t]) => {
      const execute = t.execute;
      if (!execute) return [name, t];
      const recorded: Tool["execute"] = async (input, options) => {
        const refused = stopped(options);
        if (refused) return refused;
        const startedAt = deps.clock();
        const started = performance.now();
        const elapsed = () => Math.round(performance.now() - started);
        let id: number;
        try {
          id = await openOwnAttempt(deps.db, { taskId: task.id, toolName: name, startedAt });
        } catch (error) {
          if (!isAppError(error) || error.code !== "task_not_running") throw error;
          sessions.track(
            recordUnsentCall(deps, {
              taskId: task.id,
              modelToolName: name,
              connectionId: null,
              connectionRevision: null,
              toolName: name,
              startedAt,
              durationMs: elapsed(),
              outcome: "refused",
              errorCode: error.code,
            }),
          );
          return { outcome: "refused", error: error.code, message: error.message } satisfies ToolOutput;
        }
        const finished = (errorCode: string | null) =>
          sessions.finished({
            id,
            outcome: errorCode ? "error" : "ok",
            errorCode,
            durationMs: elapsed(),
          });
        // Tracked with its outcome, so a settle never finds the call answered but unrecorded.
        const call = (async () => {
          try {
            const output = await execute(input, options);
            const { outcome, error } = (output ?? {}) as { outcome?: unknown; error?: unknown };
            finished(outcome === "error" ? (typeof error === "string" ? error : "tool_error") : null);
            return output;
          } catch (error) {
            finished("internal");
            throw error;
          }
        })();
        sessions.track(call);
        return call;
      };
      return [name, { ...t, execute: recorded }];
    }),
  );
}
