import type { TelemetryTenant } from "../telemetry-records.ts";
import type { SqlRunner } from "./sql-runner.ts";

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
