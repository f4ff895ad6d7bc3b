import { count, eq, sum } from "drizzle-orm";
import {
  generatePublishableKey,
  newPublishableKeyId,
} from "../../src/features/publishable-keys/key-value.ts";
import type { Db } from "../../src/platform/db/client.ts";
import { problems } from "../../src/platform/db/schema/problems.ts";
import { publishableKeys } from "../../src/platform/db/schema/publishable-keys.ts";
import { telemetryTraceChunks } from "../../src/platform/db/schema/telemetry.ts";

/** A publishable key for the tenant's environment, written directly (no API, no actor). */
export async function createPublishableKeyRow(
  db: Db,
  tenant: { organizationId: string; environmentId: string; userId: string },
): Promise<string> {
  const generated = generatePublishableKey();
  await db.insert(publishableKeys).values({
    id: newPublishableKeyId(),
    organizationId: tenant.organizationId,
    environmentId: tenant.environmentId,
    name: "bench",
    prefix: generated.prefix,
    keyHash: generated.hash,
    createdBy: tenant.userId,
  });
  return generated.key;
}

/** What the environment holds after a run: spans, problems and the occurrences they counted. */
export async function countStored(db: Db, environmentId: string) {
  const [spans] = await db
    .select({ n: sum(telemetryTraceChunks.spanCount) })
    .from(telemetryTraceChunks)
    .where(eq(telemetryTraceChunks.environmentId, environmentId));
  const [grouped] = await db
    .select({ problems: count(), occurrences: sum(problems.count) })
    .from(problems)
    .where(eq(problems.environmentId, environmentId));
  return {
    spans: Number(spans?.n ?? 0),
    problems: grouped?.problems ?? 0,
    problemOccurrences: Number(grouped?.occurrences ?? 0),
  };
}
