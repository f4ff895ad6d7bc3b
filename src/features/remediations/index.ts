// The public entry of features/remediations: all that other business areas may use of it (the
// features-meet-at-their-entry rule of .dependency-cruiser.cjs). Transports import its files directly.
export { chooseProblem } from "./choose-problem.ts";
export type { Remediation } from "./schemas.ts";
export { startRefusal } from "./start-refusal.ts";
export type { StartedRemediation } from "./start-remediation.ts";
export { authorizeStart, startRemediation } from "./start-remediation.ts";
