import type { problems } from "../../../platform/db/schema/problems.ts";
import type { Problem, ProblemSummary } from "./schemas.ts";
import { parseStack } from "./stack-frames.ts";

/** A problem with its latest remediation (`problemColumns`). */
type ProblemRow = typeof problems.$inferSelect & {
  remediationId: string | null;
  remediationState: string | null;
};

/** Frames shown with a problem: plenty to read, bounded for pathological stacks. */
const MAX_FRAMES = 50;

export const toProblemSummary = (row: ProblemRow): ProblemSummary => ({
  id: row.id,
  fingerprint: row.fingerprint,
  title: row.title,
  culprit: row.culprit,
  service: row.serviceName,
  exceptionType: row.exceptionType,
  status: row.status,
  count: row.count,
  firstSeen: row.firstSeen.toISOString(),
  lastSeen: row.lastSeen.toISOString(),
  revision: row.revision,
  remediationId: row.remediationId,
  remediationState: row.remediationState,
});

export const toProblem = (row: ProblemRow): Problem => ({
  ...toProblemSummary(row),
  sampleTraceIds: row.sampleTraceIds,
  sampleMessage: row.sampleMessage,
  stackTrace: row.sampleStacktrace,
  frames: row.sampleStacktrace ? parseStack(row.sampleStacktrace).slice(0, MAX_FRAMES) : [],
  resolvedAt: row.resolvedAt?.toISOString() ?? null,
  statusChangedAt: row.statusChangedAt?.toISOString() ?? null,
});
