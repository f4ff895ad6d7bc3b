/**
 * `bench:gate` support: the successful path of `callSnapshotTool` re-run step by step with the
 * same verbs, timed between steps, to say where a call's time goes. Not patchbay's code path:
 * here the finishing write is awaited inside the call, where the runtime defers it to the end of
 * the step.
 */

import { finishToolCalls } from "../../src/features/tasks/call-record.ts";
import { DEFAULT_CALL_TIMEOUT_MS } from "../../src/features/tasks/call-snapshot-tool.ts";
import { openAttempt } from "../../src/features/tasks/gate.ts";
import type { SessionPool } from "../../src/features/tasks/session-pool.ts";
import { normalizeResult, validateStructuredContent } from "../../src/features/tasks/tool-result.ts";
import type { GateBench } from "./gate-setup.ts";

/** Milliseconds spent in each step of one call. */
export type Split = {
  session: number;
  attempt: number;
  remote: number;
  normalize: number;
  finish: number;
  total: number;
};

export const SPLIT_STEPS = ["session", "attempt", "remote", "normalize", "finish"] as const;

export async function splitCall(
  bench: GateBench,
  sessions: SessionPool,
  input: Record<string, unknown>,
): Promise<Split> {
  const { deps, task, tool, frozen } = bench;
  const startedAt = deps.clock();
  const t0 = performance.now();
  const session = sessions.checked(frozen.connectionId);
  if (!session) throw new Error("the task's first call has not opened the session");
  const t1 = performance.now();
  const id = await openAttempt(deps.db, { task, frozen, tool, startedAt });
  const t2 = performance.now();
  const result = await session.callTool(tool.toolName, input, DEFAULT_CALL_TIMEOUT_MS);
  const t3 = performance.now();
  const normalized = normalizeResult(result);
  const invalid = validateStructuredContent(tool, result.structuredContent);
  if (invalid || normalized.isError) throw new Error(`echo failed: ${invalid ?? normalized.text}`);
  const t4 = performance.now();
  await finishToolCalls(deps.db, [{ id, outcome: "ok", errorCode: null, durationMs: Math.round(t4 - t0) }]);
  const t5 = performance.now();
  return {
    session: t1 - t0,
    attempt: t2 - t1,
    remote: t3 - t2,
    normalize: t4 - t3,
    finish: t5 - t4,
    total: t5 - t0,
  };
}
