/**
 * What a remediation needs from the telemetry problem store and the log/trace queries. The
 * store itself lives elsewhere; this is the narrow read interface the run and its agent tools
 * use, always scoped to one organisation and environment (tenancy is the implementation's
 * first filter, never the caller's afterthought).
 */
export type EvidenceScope = { organizationId: string; environmentId: string };

export type EvidenceProblem = {
  id: string;
  title: string;
  service: string;
  status: "open" | "resolved" | "regressed" | "ignored";
  culprit?: string | undefined;
  exceptionType?: string | undefined;
  message?: string | undefined;
  /** A sample stack trace, as text. */
  stackTrace?: string | undefined;
  sampleTraceIds: string[];
  firstSeen?: string | undefined;
  lastSeen?: string | undefined;
  count?: number | undefined;
};

export type EvidenceLogRecord = {
  timestamp: string;
  severity: string;
  body: string;
  service?: string | undefined;
  traceId?: string | undefined;
  spanId?: string | undefined;
  attributes?: Record<string, unknown> | undefined;
};

export type EvidenceSpan = {
  spanId: string;
  parentSpanId?: string | undefined;
  name: string;
  service: string;
  startTime: string;
  durationMs: number;
  status: "unset" | "ok" | "error";
  attributes?: Record<string, unknown> | undefined;
  events?: { name: string; attributes?: Record<string, unknown> | undefined }[] | undefined;
};

export type EvidenceTrace = { traceId: string; spans: EvidenceSpan[] };

export interface RemediationEvidence {
  /** The problem, or undefined when it does not exist in this environment. */
  getProblem(scope: EvidenceScope, problemId: string): Promise<EvidenceProblem | undefined>;
  /** Log records matching a free-text query, newest first, at most `limit`. */
  searchLogs(scope: EvidenceScope, query: { query: string; limit: number }): Promise<EvidenceLogRecord[]>;
  getTrace(scope: EvidenceScope, traceId: string): Promise<EvidenceTrace | undefined>;
}

/** An in-memory store keyed by environment, for tests and demos. */
export function memoryEvidence(data: {
  problems?: (EvidenceProblem & { environmentId: string })[];
  logs?: (EvidenceLogRecord & { environmentId: string })[];
  traces?: (EvidenceTrace & { environmentId: string })[];
}): RemediationEvidence & { problems: (EvidenceProblem & { environmentId: string })[] } {
  const problems = data.problems ?? [];
  return {
    problems,
    async getProblem(scope, problemId) {
      const found = problems.find((p) => p.id === problemId && p.environmentId === scope.environmentId);
      if (!found) return undefined;
      const { environmentId: _, ...problem } = found;
      return problem;
    },
    async searchLogs(scope, { query, limit }) {
      const needle = query.toLowerCase();
      return (data.logs ?? [])
        .filter((l) => l.environmentId === scope.environmentId)
        .filter((l) => `${l.body} ${JSON.stringify(l.attributes ?? {})}`.toLowerCase().includes(needle))
        .sort((a, b) => b.timestamp.localeCompare(a.timestamp))
        .slice(0, limit)
        .map(({ environmentId: _, ...record }) => record);
    },
    async getTrace(scope, traceId) {
      const found = (data.traces ?? []).find(
        (t) => t.traceId === traceId && t.environmentId === scope.environmentId,
      );
      if (!found) return undefined;
      const { environmentId: _, ...trace } = found;
      return trace;
    },
  };
}
