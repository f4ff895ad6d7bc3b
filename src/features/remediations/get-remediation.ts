import { and, asc, desc, eq } from "drizzle-orm";
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import { remediationEvents, remediations } from "../../platform/db/schema/remediations.ts";
import type { RemediationRow } from "./run-state.ts";
import type { Remediation } from "./schemas.ts";
import { syncLocalReview } from "./sync-local-review.ts";
import { toRemediation } from "./to-remediation.ts";

const MAX_EVENTS = 200;

/**
 * One run with its latest progress events, for polling (REST for people, the free x402 poll
 * for agents). Scoped to the organisation (and environment when given): another tenant's run
 * is not found. A local-git run awaiting review learns here whether its branch was merged or
 * deleted by hand.
 */
export async function getRemediation(args: {
  deps: Deps;
  organizationId: string;
  environmentId?: string | undefined;
  remediationId: string;
}): Promise<Remediation> {
  const { deps } = args;
  let row = await findRemediation(deps, args);
  if (row.status === "awaiting-review") row = await syncLocalReview(deps, row);
  const events = await deps.db
    .select()
    .from(remediationEvents)
    .where(eq(remediationEvents.remediationId, row.id))
    .orderBy(desc(remediationEvents.id))
    .limit(MAX_EVENTS);
  return toRemediation(deps.config.baseUrl, row, events.reverse());
}

export async function findRemediation(
  deps: Deps,
  ref: { organizationId: string; environmentId?: string | undefined; remediationId: string },
  opts: { forUpdate?: boolean; tx?: Deps["db"] } = {},
): Promise<RemediationRow> {
  const db = opts.tx ?? deps.db;
  const query = db
    .select()
    .from(remediations)
    .where(
      and(
        eq(remediations.id, ref.remediationId),
        eq(remediations.organizationId, ref.organizationId),
        ref.environmentId ? eq(remediations.environmentId, ref.environmentId) : undefined,
      ),
    )
    .orderBy(asc(remediations.id))
    .limit(1);
  const [row] = opts.forUpdate ? await query.for("update") : await query;
  if (!row) throw new AppError("not_found", `Remediation ${ref.remediationId} was not found.`);
  return row;
}
