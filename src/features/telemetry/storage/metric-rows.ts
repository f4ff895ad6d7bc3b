import type { MetricPointRecord, TelemetryTenant } from "../telemetry-records.ts";
import { copyBuffer, copyJson, copyNullable, copyText } from "./copy-text.ts";
import type { SqlRunner } from "./sql-runner.ts";

const columns =
  "organization_id, environment_id, name, type, unit, service_name, time, start_time, value, data, attributes";

/** Data points as COPY text rows (copy-text.ts), in `columns` order, UTF-8. */
export function metricCopyText(tenant: TelemetryTenant, records: MetricPointRecord[]): Buffer {
  const prefix = `${copyText(tenant.organizationId)}\t${tenant.environmentId}\t`;
  const data = copyBuffer(records.length * 256);
  for (const r of records) {
    data.push(
      `${prefix}${copyText(r.name)}\t${r.type}\t${copyNullable(r.unit)}\t${copyText(r.serviceName)}\t` +
        `${r.time}\t${r.startTime ?? "\\N"}\t${r.value === null ? "\\N" : String(r.value)}\t` +
        `${r.data === null ? "\\N" : copyJson(r.data)}\t${copyJson(r.attributes)}\n`,
    );
  }
  return data.done();
}

/** Data points by one COPY (a retried request is recognised by its request key, not here). */
export const copyMetricPoints = (run: SqlRunner, data: Buffer): Promise<void> =>
  run.copyIn(`telemetry_metric_points (${columns})`, data);
