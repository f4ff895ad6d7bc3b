// The public entry of features/telemetry: all that other business areas may use of it (the
// features-meet-at-their-entry rule of .dependency-cruiser.cjs). Transports import its files directly.
export { getProblem } from "./problems/get-problem.ts";
export { listProblems } from "./problems/list-problems.ts";
export { problemColumns } from "./problems/problem-columns.ts";
export type { ProblemSummary } from "./problems/schemas.ts";
export { getServiceHealth, windowMs } from "./queries/get-service-health.ts";
export { getTrace } from "./queries/get-trace.ts";
export { hasTelemetry } from "./queries/has-telemetry.ts";
export type { EnvironmentRead } from "./queries/schemas.ts";
export { serviceHealthWindows } from "./queries/schemas.ts";
export { searchLogs } from "./queries/search-logs.ts";
