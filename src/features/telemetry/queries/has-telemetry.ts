import { eq, sql } from "drizzle-orm";
import type { Db } from "../../../platform/db/client.ts";
import { telemetryResources } from "../../../platform/db/schema/telemetry.ts";

/**
 * Whether the environment has sent any telemetry (spans, logs or metrics) that was stored: every
 * stored batch records its resource in the same transaction, so one primary-key probe answers.
 * The resource table stays in PostgreSQL whatever stores the signals.
 */
export async function hasTelemetry(db: Db, environmentId: string): Promise<boolean> {
  const rows = await db
    .select({ one: sql<number>`1` })
    .from(telemetryResources)
    .where(eq(telemetryResources.environmentId, environmentId))
    .limit(1);
  return rows.length > 0;
}
