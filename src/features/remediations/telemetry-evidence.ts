import { systemContext } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { isAppError } from "../../errors.ts";
import { getProblem, getTrace, searchLogs } from "../telemetry/index.ts";
import type { EvidenceScope, RemediationEvidence } from "./evidence.ts";

/** How far back an investigation searches logs: the default retention. */
const LOG_LOOKBACK_MS = 7 * 24 * 60 * 60_000;

/**
 * The evidence a remediation reads, from the telemetry store: the problem, its logs and traces,
 * through the same verbs as the REST and x402 reads, as the system acting for the scope's
 * organisation: whoever asks (the run's job, or a person starting or listing runs) has already
 * been authorised for the remediation, and the verbs still hold the environment to that
 * organisation. `deps` is read at each call: the evidence is built with the deps it belongs to.
 */
export function telemetryEvidence(deps: () => Deps): RemediationEvidence {
  const as = ({ organizationId, environmentId }: EvidenceScope) =>
    systemContext(deps(), { name: "remediation-evidence", id: environmentId, organizationId });
  return {
    async getProblem(scope, problemId) {
      const { environmentId } = scope;
      const problem = await orUndefined(getProblem({ ctx: as(scope), input: { environmentId, problemId } }));
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
      const ctx = as(scope);
      const page = await searchLogs({
        ctx,
        input: {
          environmentId: scope.environmentId,
          q: query.query.slice(0, 200) || undefined,
          from: new Date(ctx.deps.clock().getTime() - LOG_LOOKBACK_MS).toISOString(),
          pageSize: Math.max(1, Math.min(200, query.limit)),
        },
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
      const input = { environmentId: scope.environmentId, traceId: traceId.toLowerCase() };
      const trace = await orUndefined(getTrace({ ctx: as(scope), input }));
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
