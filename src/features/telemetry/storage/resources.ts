import { createHash } from "node:crypto";
import type { JsonObject } from "../../../platform/db/schema/telemetry.ts";
import type { TelemetryTenant } from "../telemetry-records.ts";
import type { SqlRunner } from "./sql-runner.ts";

/** A resource as rows refer to it: `id` is a signed 64-bit integer in decimal. */
export type ResourceRef = { id: string; serviceName: string; attributes: JsonObject };

/**
 * The resources of one batch. Records of one OTLP resource share one attributes object, so the
 * hash (first 8 bytes of SHA-256 over the JSON) is computed once per resource, not per row.
 */
export function resourceRefs() {
  const byObject = new Map<JsonObject, ResourceRef>();
  // Equal maps in distinct objects (hand-built records) are one resource: one upsert row.
  const byId = new Map<string, ResourceRef>();
  return {
    refOf(attributes: JsonObject, serviceName: string): ResourceRef {
      let ref = byObject.get(attributes);
      if (!ref) {
        const digest = createHash("sha256").update(JSON.stringify(attributes)).digest();
        const id = digest.readBigInt64BE(0).toString();
        ref = byId.get(id) ?? { id, serviceName, attributes };
        byId.set(id, ref);
        byObject.set(attributes, ref);
      }
      return ref;
    },
    all: (): ResourceRef[] => [...byId.values()],
  };
}

/** How often one process refreshes a resource's `last_seen`. */
const TOUCH_EVERY_MS = 60 * 60 * 1000;
const MAX_REMEMBERED = 50_000;

/**
 * Which resources this process recorded lately: refreshing `last_seen` locks the resource row
 * until the commit, so it runs once an hour per resource and process, not in every write.
 */
export function resourceTouches() {
  const touched = new Map<string, number>();
  const key = (tenant: TelemetryTenant, ref: ResourceRef) => `${tenant.environmentId}/${ref.id}`;
  return {
    due(tenant: TelemetryTenant, refs: ResourceRef[], nowMs: number): ResourceRef[] {
      return refs.filter((ref) => nowMs - (touched.get(key(tenant, ref)) ?? 0) >= TOUCH_EVERY_MS);
    },
    /** Call after the transaction that wrote them committed. */
    remember(tenant: TelemetryTenant, refs: ResourceRef[], nowMs: number) {
      if (touched.size + refs.length > MAX_REMEMBERED) touched.clear();
      for (const ref of refs) touched.set(key(tenant, ref), nowMs);
    },
  };
}

/**
 * Records resources (new ones inserted, known ones' `last_seen` moved on when an hour old).
 * Resources are sorted by id so two writers lock shared rows in the same order.
 */
export async function upsertResources(
  run: SqlRunner,
  tenant: TelemetryTenant,
  refs: ResourceRef[],
  now: string,
): Promise<void> {
  if (refs.length === 0) return;
  const rows = [...refs]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((ref) => ({ id: ref.id, service_name: ref.serviceName, attributes: ref.attributes }));
  await run.query(
    `insert into telemetry_resources as r
       (environment_id, resource_id, organization_id, service_name, attributes, first_seen, last_seen)
     select $2::uuid, d.id, $1, d.service_name, d.attributes, $4::timestamptz, $4::timestamptz
       from jsonb_to_recordset($3::text::jsonb) as d(id bigint, service_name text, attributes jsonb)
     on conflict (environment_id, resource_id) do update set last_seen = excluded.last_seen
       where r.last_seen < excluded.last_seen - interval '1 hour'`,
    [tenant.organizationId, tenant.environmentId, JSON.stringify(rows), now],
  );
}
