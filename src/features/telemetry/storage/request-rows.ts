import type { LogRecordRow, MetricPointRecord, TelemetryTenant } from "../telemetry-records.ts";
import { copyBuffer, copyJson, copyNullable, copyText } from "./copy-text.ts";
import { type ResourceRef, resourceRefs } from "./resources.ts";
import type { SqlRunner } from "./sql-runner.ts";

/**
 * A log or metric request's rows as one text COPY (copy-text.ts), UTF-8. They have no natural
 * key: a retried request is recognised by its request key (`claimRequest`), not here.
 */
export type RequestCopy = { target: string; data: Buffer; resources: ResourceRef[] };

const tenantPrefix = (tenant: TelemetryTenant) =>
  `${copyText(tenant.organizationId)}\t${tenant.environmentId}\t`;

export function logCopy(tenant: TelemetryTenant, records: LogRecordRow[]): RequestCopy {
  const resources = resourceRefs();
  const prefix = tenantPrefix(tenant);
  const data = copyBuffer(records.length * 384);
  for (const r of records) {
    data.push(
      `${prefix}${r.time}\t${r.severityNumber}\t${copyNullable(r.severityText)}\t${copyNullable(r.body)}\t` +
        `${copyText(r.serviceName)}\t${r.traceId ?? "\\N"}\t${r.spanId ?? "\\N"}\t${copyNullable(r.eventName)}\t` +
        `${copyNullable(r.scopeName)}\t${resources.refOf(r.resourceAttributes, r.serviceName).id}\t${copyJson(r.attributes)}\n`,
    );
  }
  return {
    target:
      "telemetry_logs (organization_id, environment_id, time, severity_number, severity_text, body, " +
      "service_name, trace_id, span_id, event_name, scope_name, resource_id, attributes)",
    // Bytes outside the JS heap: young-generation GCs need not copy them while the batch waits.
    data: data.done(),
    resources: resources.all(),
  };
}

export function metricCopy(tenant: TelemetryTenant, records: MetricPointRecord[]): RequestCopy {
  // Points carry no resource id; recording their resources marks the environment as sending
  // telemetry (hasTelemetry).
  const resources = resourceRefs();
  const prefix = tenantPrefix(tenant);
  const data = copyBuffer(records.length * 256);
  for (const r of records) {
    resources.refOf(r.resourceAttributes, r.serviceName);
    data.push(
      `${prefix}${copyText(r.name)}\t${r.type}\t${copyNullable(r.unit)}\t${copyText(r.serviceName)}\t` +
        `${r.time}\t${r.startTime ?? "\\N"}\t${r.value === null ? "\\N" : String(r.value)}\t` +
        `${r.data === null ? "\\N" : copyJson(r.data)}\t${copyJson(r.attributes)}\n`,
    );
  }
  return {
    target:
      "telemetry_metric_points (organization_id, environment_id, name, type, unit, service_name, time, " +
      "start_time, value, data, attributes)",
    data: data.done(),
    resources: resources.all(),
  };
}

/**
 * Records, in the write's transaction, that the request with this key is being stored; false when
 * it already was (then the caller stores nothing). A concurrent write of the same request waits on
 * the key until the first commits (then false) or rolls back (then true). No key: always true.
 */
export async function claimRequest(
  run: SqlRunner,
  tenant: TelemetryTenant,
  requestKey: string | undefined,
  now: Date,
): Promise<boolean> {
  if (requestKey === undefined) return true;
  const claimed = await run.query(
    `insert into telemetry_requests (environment_id, request_key, received_at) values ($1, $2, $3)
     on conflict do nothing returning request_key`,
    [tenant.environmentId, requestKey, now.toISOString()],
  );
  return claimed.length > 0;
}
