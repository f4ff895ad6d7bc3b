import { and, desc, eq } from "drizzle-orm";
import { requirePermission, type ServiceContext } from "../../context.ts";
import { AppError } from "../../errors.ts";
import type { Db } from "../../platform/db/client.ts";
import { remediationEvents, remediations } from "../../platform/db/schema/remediations.ts";
import { findEnvironment } from "../environments/find-environment.ts";
import { syncLocalReview } from "./review-outcome.ts";
import type { RemediationRow } from "./run-state.ts";
import type { Remediation } from "./schemas.ts";
import { toRemediation } from "./to-remediation.ts";

const MAX_EVENTS = 200;

type RunRef = { environmentId?: string | undefined; remediationId: string };

/**
 * One run with its latest progress events, for polling: a person on REST (the environment named
 * in the path), an agent on the free x402 poll with its onboarding session's token (its
 * organisation's runs, whatever the environment).
 */
export async function getRemediation(args: { ctx: ServiceContext; input: RunRef }): Promise<Remediation> {
  requirePermission(args.ctx, "remediations:read");
  return readRemediation(args.ctx, args.input);
}

/**
 * The run as its pollers see it. A local-git run awaiting review learns here whether its branch
 * was merged or deleted by hand.
 */
export async function readRemediation(ctx: ServiceContext, ref: RunRef): Promise<Remediation> {
  const { deps } = ctx;
  let row = await findRemediation(deps.db, ctx, ref);
  if (row.status === "awaiting-review") row = await syncLocalReview(deps, row);
  const events = await deps.db
    .select()
    .from(remediationEvents)
    .where(eq(remediationEvents.remediationId, row.id))
    .orderBy(desc(remediationEvents.id))
    .limit(MAX_EVENTS);
  return toRemediation(deps.config.baseUrl, row, events.reverse());
}

/**
 * The caller's run: scoped to its organisation, and to the environment when one is named (which
 * must be the caller's: `findEnvironment`). Another tenant's run is not found. `forUpdate` locks
 * the row inside a transaction.
 */
export async function findRemediation(
  db: Db,
  ctx: ServiceContext,
  ref: RunRef,
  opts: { forUpdate?: boolean } = {},
): Promise<RemediationRow> {
  if (ref.environmentId) await findEnvironment(db, ctx, ref.environmentId);
  const query = db
    .select()
    .from(remediations)
    .where(
      and(
        eq(remediations.id, ref.remediationId),
        eq(remediations.organizationId, ctx.actor.organizationId),
        ref.environmentId ? eq(remediations.environmentId, ref.environmentId) : undefined,
      ),
    )
    .limit(1);
  const [row] = opts.forUpdate ? await query.for("update") : await query;
  if (!row) throw new AppError("not_found", `Remediation ${ref.remediationId} was not found.`);
  return row;
}
