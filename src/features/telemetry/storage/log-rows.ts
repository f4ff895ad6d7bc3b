import type { LogRecordRow, TelemetryTenant } from "../telemetry-records.ts";
import { copyBuffer, copyJson, copyNullable, copyText } from "./copy-text.ts";
import type { ResourceRef } from "./resources.ts";
import type { SqlRunner } from "./sql-runner.ts";

const columns =
  "organization_id, environment_id, time, severity_number, severity_text, body, service_name, trace_id, " +
  "span_id, event_name, scope_name, resource_id, attributes";

/** Log records as COPY text rows (copy-text.ts), in `columns` order, UTF-8. */
export function logCopyText(
  tenant: TelemetryTenant,
  records: LogRecordRow[],
  refOf: (record: LogRecordRow) => ResourceRef,
): Buffer {
  const prefix = `${copyText(tenant.organizationId)}\t${tenant.environmentId}\t`;
  const data = copyBuffer(records.length * 384);
  for (const r of records) {
    data.push(
      `${prefix}${r.time}\t${r.severityNumber}\t${copyNullable(r.severityText)}\t${copyNullable(r.body)}\t` +
        `${copyText(r.serviceName)}\t${r.traceId ?? "\\N"}\t${r.spanId ?? "\\N"}\t${copyNullable(r.eventName)}\t` +
        `${copyNullable(r.scopeName)}\t${refOf(r).id}\t${copyJson(r.attributes)}\n`,
    );
  }
  // Bytes outside the JS heap: young-generation GCs need not copy them while the batch waits.
  return data.done();
}

/** Log records by one COPY (they have no natural key: a retried batch is stored again). */
export const copyLogs = (run: SqlRunner, data: Buffer): Promise<void> =>
  run.copyIn(`telemetry_logs (${columns})`, data);
