import type { QueueOptions } from "../../platform/queue/queue.ts";

/** The job queue tasks run on (src/platform/queue). */
export const TASK_QUEUE = "tasks.run";

/** The job queue remediation runs advance on, one job per step. */
export const REMEDIATION_QUEUE = "remediations.step";

/**
 * Every queue the service uses. A task run may take up to its 1 h time budget, so a run is only
 * given up (and its task marked interrupted by the next delivery) after that.
 */
export const jobQueues: Record<string, QueueOptions> = {
  [TASK_QUEUE]: { expireInSeconds: 60 * 60 + 5 * 60 },
  // One step of a remediation run (src/features/remediations/run-step.ts). "stately": at most
  // one queued and one active job per run (singletonKey = the run's id), on every instance.
  [REMEDIATION_QUEUE]: { policy: "stately", expireInSeconds: 60 * 60 + 5 * 60 },
};

/** Names the runtime's own tools take; snapshot tools never get them. */
export const BUILTIN_TOOL_NAMES = [
  "finish",
  "get_problem",
  "search_logs",
  "get_trace",
  "list_files",
  "read_file",
  "search_files",
  "write_file",
  "run_tests",
];
