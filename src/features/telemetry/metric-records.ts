import type { JsonObject, MetricType } from "../../platform/db/schema/telemetry.ts";
import type { OtlpLimits } from "./limits.ts";
import { cleanText, finiteOrNull, has, int64ToJson, nanosToIso, toBigInt } from "./otlp-scalars.ts";
import type {
  ExponentialHistogramDataPoint,
  HistogramDataPoint,
  Int64,
  Metric,
  MetricsRequest,
  NumberDataPoint,
  PointBase,
  SummaryDataPoint,
} from "./otlp-types.ts";
import { attributesToJson, serviceNameOf } from "./otlp-values.ts";
import { createRejections, type Rejections } from "./rejections.ts";
import type { MetricPointRecord } from "./telemetry-records.ts";

type ShapedPoint = { point: PointBase; value: number | null; data: JsonObject | null };

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
        const shaped = shapePoints(metric, limits);
        if (!shaped) continue;
        const name = cleanText(metric.name ?? "", limits.maxNameChars);
        const unit = cleanText(metric.unit ?? "", 64) || null;
        for (const { point, value, data } of shaped.points) {
          const time = toBigInt(point.timeUnixNano, true);
          const start = toBigInt(point.startTimeUnixNano, true);
          if (name === "") rejected.add("metric name is empty");
          else if (time === 0n) rejected.add("time_unix_nano is missing");
          else if (time > latestNanos) rejected.add("time_unix_nano lies more than 24 hours in the future");
          else {
            records.push({
              name,
              type: shaped.type,
              unit,
              serviceName,
              resourceAttributes,
              time: nanosToIso(time),
              startTime: start === 0n ? null : nanosToIso(start),
              value,
              data,
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
const optional = (point: object, key: string, value: number | undefined) =>
  has(point, key) ? finiteOrNull(value) : null;

function numberValue(point: NumberDataPoint): number | null {
  if (has(point, "asDouble")) return finiteOrNull(point.asDouble);
  if (has(point, "asInt")) return Number(toBigInt(point.asInt, false));
  return null;
}

function shapePoints(
  metric: Metric,
  limits: OtlpLimits,
): { type: MetricType; points: ShapedPoint[] } | undefined {
  const buckets = (list: Int64[] | undefined) => (list ?? []).slice(0, limits.maxBuckets).map(count);
  const distribution = (p: HistogramDataPoint | ExponentialHistogramDataPoint, temporality: number) => ({
    temporality,
    count: count(p.count),
    sum: optional(p, "sum", p.sum),
    min: optional(p, "min", p.min),
    max: optional(p, "max", p.max),
  });
  if (metric.gauge) {
    const points = metric.gauge.dataPoints ?? [];
    return {
      type: "gauge",
      points: points.map((point) => ({ point, value: numberValue(point), data: null })),
    };
  }
  if (metric.sum) {
    const data = {
      temporality: metric.sum.aggregationTemporality ?? 0,
      monotonic: metric.sum.isMonotonic === true,
    };
    const points = metric.sum.dataPoints ?? [];
    return { type: "sum", points: points.map((point) => ({ point, value: numberValue(point), data })) };
  }
  if (metric.histogram) {
    const temporality = metric.histogram.aggregationTemporality ?? 0;
    const shape = (point: HistogramDataPoint): ShapedPoint => ({
      point,
      value: null,
      data: {
        ...distribution(point, temporality),
        bounds: (point.explicitBounds ?? []).slice(0, limits.maxBuckets).map((b) => finiteOrNull(b)),
        counts: buckets(point.bucketCounts),
      },
    });
    return { type: "histogram", points: (metric.histogram.dataPoints ?? []).map(shape) };
  }
  if (metric.exponentialHistogram) {
    const temporality = metric.exponentialHistogram.aggregationTemporality ?? 0;
    const shape = (point: ExponentialHistogramDataPoint): ShapedPoint => ({
      point,
      value: null,
      data: {
        ...distribution(point, temporality),
        scale: point.scale ?? 0,
        zeroCount: count(point.zeroCount),
        zeroThreshold: finiteOrNull(point.zeroThreshold ?? 0),
        positive: { offset: point.positive?.offset ?? 0, counts: buckets(point.positive?.bucketCounts) },
        negative: { offset: point.negative?.offset ?? 0, counts: buckets(point.negative?.bucketCounts) },
      },
    });
    return {
      type: "exponential_histogram",
      points: (metric.exponentialHistogram.dataPoints ?? []).map(shape),
    };
  }
  if (metric.summary) {
    const shape = (point: SummaryDataPoint): ShapedPoint => ({
      point,
      value: null,
      data: {
        count: count(point.count),
        sum: finiteOrNull(point.sum ?? 0),
        quantiles: (point.quantileValues ?? []).slice(0, limits.maxBuckets).map((q) => ({
          quantile: finiteOrNull(q.quantile ?? 0),
          value: finiteOrNull(q.value ?? 0),
        })),
      },
    });
    return { type: "summary", points: (metric.summary.dataPoints ?? []).map(shape) };
  }
  return undefined;
}
