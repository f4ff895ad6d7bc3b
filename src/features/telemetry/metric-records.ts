import type { JsonObject, MetricType } from "../../platform/db/schema/telemetry.ts";
import type { OtlpLimits } from "./limits.ts";
import { cleanText, finiteOrNull, has, int64ToJson, nanosToIso, toBigInt } from "./otlp-scalars.ts";
import type { DataPoint, Int64, Metric, MetricsRequest, Points } from "./otlp-types.ts";
import { attributesToJson, serviceNameOf } from "./otlp-values.ts";
import { createRejections, type Rejections } from "./rejections.ts";
import type { MetricPointRecord } from "./telemetry-records.ts";

/**
 * An export request → one row per data point (minimal by design: name, service, time, a value or
 * a distribution summary, attributes). A point without a time, stamped beyond the clock skew, or
 * of a metric without a name is refused.
 */
export function toMetricPointRecords(
  request: MetricsRequest,
  now: Date,
  limits: OtlpLimits,
): { records: MetricPointRecord[]; rejected: Rejections } {
  const records: MetricPointRecord[] = [];
  const rejected = createRejections();
  const latestNanos = BigInt(now.getTime() + limits.maxFutureSkewMs) * 1_000_000n;
  for (const resourceMetrics of request.resourceMetrics ?? []) {
    const resourceAttributes = attributesToJson(resourceMetrics.resource?.attributes, limits);
    const serviceName = serviceNameOf(resourceAttributes, limits);
    for (const scopeMetrics of resourceMetrics.scopeMetrics ?? []) {
      for (const metric of scopeMetrics.metrics ?? []) {
        const shape = shapeOf(metric, limits);
        if (!shape) continue;
        const name = cleanText(metric.name ?? "", limits.maxNameChars);
        const unit = cleanText(metric.unit ?? "", 64) || null;
        const numeric = shape.type === "gauge" || shape.type === "sum";
        for (const point of shape.points.dataPoints ?? []) {
          const time = toBigInt(point.timeUnixNano, true);
          const start = toBigInt(point.startTimeUnixNano, true);
          if (name === "") rejected.add("metric name is empty");
          else if (time === 0n) rejected.add("time_unix_nano is missing");
          else if (time > latestNanos) rejected.add("time_unix_nano lies more than 24 hours in the future");
          else {
            records.push({
              name,
              type: shape.type,
              unit,
              serviceName,
              resourceAttributes,
              time: nanosToIso(time),
              startTime: start === 0n ? null : nanosToIso(start),
              value: numeric ? numberValue(point) : null,
              data: shape.data(point),
              attributes: attributesToJson(point.attributes, limits),
            });
          }
        }
      }
    }
  }
  return { records, rejected };
}

const count = (value: Int64 | undefined) => int64ToJson(value, true);
/** proto3 `optional` fields: absent is null, not 0. */
const optional = (point: DataPoint, key: "sum" | "min" | "max") =>
  has(point, key) ? finiteOrNull(point[key]) : null;

function numberValue(point: DataPoint): number | null {
  if (has(point, "asDouble")) return finiteOrNull(point.asDouble);
  if (has(point, "asInt")) return Number(toBigInt(point.asInt, false));
  return null;
}

/** A metric's type, its points, and each point's distribution summary (none for numbers). */
function shapeOf(
  metric: Metric,
  limits: OtlpLimits,
): { type: MetricType; points: Points; data(point: DataPoint): JsonObject | null } | undefined {
  const { gauge, sum, histogram, exponentialHistogram, summary } = metric;
  const buckets = (list: Int64[] | undefined) => (list ?? []).slice(0, limits.maxBuckets).map(count);
  const distribution = (p: DataPoint, points: Points) => ({
    temporality: points.aggregationTemporality ?? 0,
    count: count(p.count),
    sum: optional(p, "sum"),
    min: optional(p, "min"),
    max: optional(p, "max"),
  });
  if (gauge) return { type: "gauge", points: gauge, data: () => null };
  if (sum) {
    const data = { temporality: sum.aggregationTemporality ?? 0, monotonic: sum.isMonotonic === true };
    return { type: "sum", points: sum, data: () => data };
  }
  if (histogram) {
    return {
      type: "histogram",
      points: histogram,
      data: (point) => ({
        ...distribution(point, histogram),
        bounds: (point.explicitBounds ?? []).slice(0, limits.maxBuckets).map((b) => finiteOrNull(b)),
        counts: buckets(point.bucketCounts),
      }),
    };
  }
  if (exponentialHistogram) {
    return {
      type: "exponential_histogram",
      points: exponentialHistogram,
      data: (point) => ({
        ...distribution(point, exponentialHistogram),
        scale: point.scale ?? 0,
        zeroCount: count(point.zeroCount),
        zeroThreshold: finiteOrNull(point.zeroThreshold ?? 0),
        positive: { offset: point.positive?.offset ?? 0, counts: buckets(point.positive?.bucketCounts) },
        negative: { offset: point.negative?.offset ?? 0, counts: buckets(point.negative?.bucketCounts) },
      }),
    };
  }
  if (summary) {
    return {
      type: "summary",
      points: summary,
      data: (point) => ({
        count: count(point.count),
        sum: finiteOrNull(point.sum ?? 0),
        quantiles: (point.quantileValues ?? []).slice(0, limits.maxBuckets).map((q) => ({
          quantile: finiteOrNull(q.quantile ?? 0),
          value: finiteOrNull(q.value ?? 0),
        })),
      }),
    };
  }
  return undefined;
}
