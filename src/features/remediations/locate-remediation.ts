import { eq } from "drizzle-orm";
import type { Db } from "../../platform/db/client.ts";
import { remediations } from "../../platform/db/schema/remediations.ts";

/** A run id's syntax (`rem_` + base-32), checked before any lookup. */
const RUN_ID = /^rem_[0-9a-z]{1,60}$/;

/**
 * Which organisation and environment a run belongs to, for the links patchbay hands out
 * (`{baseUrl}/remediations/{id}`, `…/review`, `…/approval`) that carry no organisation. It
 * authorises nothing: the caller must then check the person's membership of that organisation
 * and treat a non-member exactly like an unknown id (undefined here), so the answer never tells
 * an outsider that a run exists.
 */
export async function locateRemediation(args: {
  db: Db;
  input: { remediationId: string };
}): Promise<{ organizationId: string; environmentId: string } | undefined> {
  if (!RUN_ID.test(args.input.remediationId)) return undefined;
  const [row] = await args.db
    .select({ organizationId: remediations.organizationId, environmentId: remediations.environmentId })
    .from(remediations)
    .where(eq(remediations.id, args.input.remediationId))
    .limit(1);
  return row;
}
