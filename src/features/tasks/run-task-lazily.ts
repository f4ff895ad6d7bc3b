import type { runTask as RunTask } from "./run-task.ts";

/**
 * `runTask`, with the task runtime (the AI SDK, the model providers, the MCP client sessions)
 * loaded on the first run rather than at every start: a service that runs no task never holds
 * that code (docs/performance.md, "Start-up").
 */
export async function runTask(...args: Parameters<typeof RunTask>): ReturnType<typeof RunTask> {
  return (await import("./run-task.ts")).runTask(...args);
}
