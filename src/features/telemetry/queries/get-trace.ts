import { requirePermission } from "../../../context.ts";
import { AppError } from "../../../errors.ts";
import { callerEnvironment } from "../../environments/index.ts";
import { microsToIso, toNanos } from "../otlp-scalars.ts";
import type { StoredSpan } from "../telemetry-store.ts";
import { type EnvironmentRead, spanKindName, statusName, type Trace, type TraceSpan } from "./schemas.ts";

/** Spans in one answer: enough for any ordinary trace, bounded for pathological ones. */
const MAX_TRACE_SPANS = 2_000;

/** Microseconds since the epoch of a stored ISO timestamp (`…T10:00:00.123456Z`). */
const isoMicros = (iso: string): number =>
  Date.parse(`${iso.slice(0, 23)}Z`) * 1000 + Number(iso.slice(23, 26) || 0);

/**
 * One trace as its span tree: depth first, each span after its parent, siblings by start time.
 * A span whose parent was never stored (not yet arrived, dropped, or in another service's export)
 * is shown as a root. `not_found` when the environment has no span of the trace.
 */
export async function getTrace({ ctx, input }: EnvironmentRead<{ traceId: string }>): Promise<Trace> {
  requirePermission(ctx, "telemetry:read");
  const environmentId = await callerEnvironment(ctx, input.environmentId);
  const { traceId } = input;
  const stored = await ctx.deps.telemetry.store.traceSpans(environmentId, traceId, MAX_TRACE_SPANS + 1);
  if (stored.length === 0) {
    throw new AppError("not_found", `Trace ${traceId} was not found (or has passed the retention period).`);
  }
  const spans = stored.slice(0, MAX_TRACE_SPANS);
  const ordered = depthFirst(spans);
  const starts = spans.map((s) => isoMicros(s.startTime));
  const ends = spans.map((s) => isoMicros(s.endTime));
  const first = Math.min(...starts);
  const last = Math.max(...ends);
  return {
    traceId,
    spanCount: spans.length,
    truncated: stored.length > MAX_TRACE_SPANS,
    startTime: microsToIso({ micros: first, rest: 0 }),
    endTime: microsToIso({ micros: last, rest: 0 }),
    durationMs: (last - first) / 1000,
    services: [...new Set(spans.map((s) => s.serviceName))].sort(),
    spans: ordered.map(({ span, depth }) => toTraceSpan(span, depth)),
  };
}

function depthFirst(spans: StoredSpan[]): { span: StoredSpan; depth: number }[] {
  const byStart = [...spans].sort((a, b) =>
    a.startTime < b.startTime ? -1 : a.startTime > b.startTime ? 1 : 0,
  );
  const ids = new Set(byStart.map((s) => s.spanId));
  const children = new Map<string, StoredSpan[]>();
  const roots: StoredSpan[] = [];
  for (const span of byStart) {
    if (span.parentSpanId && span.parentSpanId !== span.spanId && ids.has(span.parentSpanId)) {
      const list = children.get(span.parentSpanId);
      if (list) list.push(span);
      else children.set(span.parentSpanId, [span]);
    } else roots.push(span);
  }
  const out: { span: StoredSpan; depth: number }[] = [];
  const visited = new Set<string>();
  const walk = (start: StoredSpan) => {
    const stack = [{ span: start, depth: 0 }];
    while (stack.length > 0) {
      const next = stack.pop();
      if (!next || visited.has(next.span.spanId)) continue;
      visited.add(next.span.spanId);
      out.push(next);
      const kids = children.get(next.span.spanId) ?? [];
      for (let i = kids.length - 1; i >= 0; i--) {
        const kid = kids[i];
        if (kid) stack.push({ span: kid, depth: next.depth + 1 });
      }
    }
  };
  for (const root of roots) walk(root);
  // Spans in a parent cycle (only malformed data makes one) have no root: shown as roots.
  for (const span of byStart) if (!visited.has(span.spanId)) walk(span);
  return out;
}

function toTraceSpan(span: StoredSpan, depth: number): TraceSpan {
  return {
    spanId: span.spanId,
    parentSpanId: span.parentSpanId,
    depth,
    service: span.serviceName,
    name: span.name,
    kind: spanKindName(span.kind),
    startTime: span.startTime,
    endTime: span.endTime,
    durationMs: span.durationNs / 1_000_000,
    status: { code: statusName(span.statusCode), message: span.statusMessage },
    scope: span.scopeName,
    attributes: span.attributes,
    resourceAttributes: span.resourceAttributes,
    events: span.events.map((event) => {
      const time = toNanos(event.timeUnixNano);
      return {
        name: event.name,
        time: time.micros === 0 ? null : microsToIso(time),
        attributes: event.attributes,
      };
    }),
    links: span.links,
  };
}
