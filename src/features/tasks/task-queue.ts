/** The job queue tasks run on (src/jobs). */
export const TASK_QUEUE = "tasks.run";

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
