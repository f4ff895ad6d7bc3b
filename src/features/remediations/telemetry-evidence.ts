import { isAppError } from "../../errors.ts";
import type { Db } from "../../platform/db/client.ts";
import { getProblem } from "../telemetry/problems/get-problem.ts";
import { getTrace } from "../telemetry/queries/get-trace.ts";
import { searchLogs } from "../telemetry/queries/search-logs.ts";
import type { TelemetryStore } from "../telemetry/telemetry-store.ts";
import type { RemediationEvidence } from "./evidence.ts";

/** How far back an investigation searches logs: the default retention. */
const LOG_LOOKBACK_MS = 7 * 24 * 60 * 60_000;

/**
 * The evidence a remediation reads, from the telemetry store: the problem, its logs and traces,
 * through the same verbs as the REST and x402 reads. Scoped by environment (which belongs to the
 * run's organisation: the run was started for it).
 */
export function telemetryEvidence(deps: {
  db: Db;
  clock: () => Date;
  store: TelemetryStore;
}): RemediationEvidence {
  return {
    async getProblem(scope, problemId) {
      const problem = await orUndefined(
        getProblem({ db: deps.db, environmentId: scope.environmentId, input: { problemId } }),
      );
      if (!problem) return undefined;
      return {
        id: problem.id,
        title: problem.title,
        service: problem.service,
        status: problem.status,
        culprit: problem.culprit,
        exceptionType: problem.exceptionType,
        message: problem.sampleMessage ?? undefined,
        stackTrace: problem.stackTrace ?? undefined,
        sampleTraceIds: problem.sampleTraceIds,
        firstSeen: problem.firstSeen,
        lastSeen: problem.lastSeen,
        count: problem.count,
      };
    },
    async searchLogs(scope, query) {
      const now = deps.clock();
      const page = await searchLogs({
        store: deps.store,
        environmentId: scope.environmentId,
        input: {
          q: query.query.slice(0, 200) || undefined,
          from: new Date(now.getTime() - LOG_LOOKBACK_MS).toISOString(),
          pageSize: Math.max(1, Math.min(200, query.limit)),
        },
        now,
      });
      return page.items.map((r) => ({
        timestamp: r.time,
        severity: r.severity,
        body: r.body ?? "",
        service: r.service,
        traceId: r.traceId ?? undefined,
        spanId: r.spanId ?? undefined,
        attributes: r.attributes,
      }));
    },
    async getTrace(scope, traceId) {
      if (!/^[0-9a-f]{32}$/i.test(traceId)) return undefined;
      const trace = await orUndefined(
        getTrace({
          store: deps.store,
          environmentId: scope.environmentId,
          input: { traceId: traceId.toLowerCase() },
        }),
      );
      if (!trace) return undefined;
      return {
        traceId: trace.traceId,
        spans: trace.spans.map((s) => ({
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? undefined,
          name: s.name,
          service: s.service,
          startTime: s.startTime,
          durationMs: s.durationMs,
          status: s.status.code,
          attributes: s.attributes,
          events: s.events.map((e) => ({ name: e.name, attributes: e.attributes })),
        })),
      };
    },
  };
}

async function orUndefined<T>(promise: Promise<T>): Promise<T | undefined> {
  try {
    return await promise;
  } catch (error) {
    if (isAppError(error) && error.code === "not_found") return undefined;
    throw error;
  }
}
