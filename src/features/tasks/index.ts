// The public entry of features/tasks: all that other business areas may use of it (the
// features-meet-at-their-entry rule of .dependency-cruiser.cjs). Transports import its files directly.

export { RunTakenOver } from "./run-taken-over.ts";
export { runTask } from "./run-task-lazily.ts";
export { BudgetsSchema, iso } from "./schemas.ts";
export { takeSnapshot } from "./take-snapshot.ts";
export { BUILTIN_TOOL_NAMES, REMEDIATION_QUEUE } from "./task-queue.ts";
export { committedWrites } from "./transcript-messages.ts";
