import { and, asc, eq, gt } from "drizzle-orm";
import { requirePermission, type ServiceContext } from "../../context.ts";
import { remediationEvents } from "../../platform/db/schema/remediations.ts";
import { findRemediation } from "./get-remediation.ts";
import { syncLocalReview } from "./review-outcome.ts";
import type { RemediationThread } from "./schemas.ts";
import { threadUrlFor } from "./to-remediation.ts";

const DEFAULT_LIMIT = 100;

/** Events a person caused (an approval, a cancellation, a merge or close of the review) and the agent's own. */
const byPerson = new Set(["approval_granted", "cancel_requested", "merged", "closed"]);
const byAgent = new Set(["agent_step", "change_proposed"]);

const authorOf = (type: string): RemediationThread["messages"][number]["from"] =>
  byAgent.has(type) ? "agent" : byPerson.has(type) ? "person" : "patchbay";

/**
 * A run's thread for an agent (the JSON twin of the web page at `threadUrl`, which needs a signed-in
 * member): every progress event as a message, oldest first, `after` a message id, so a poller
 * reads each message once. Scoped to the caller's organisation like every run read.
 */
export async function readRemediationThread(args: {
  ctx: ServiceContext;
  input: { remediationId: string; after?: number | undefined; limit?: number | undefined };
}): Promise<RemediationThread> {
  const { ctx, input } = args;
  requirePermission(ctx, "remediations:read");
  let run = await findRemediation(ctx.deps.db, ctx, { remediationId: input.remediationId });
  // As on a poll: a local-git run in review learns here whether its branch was merged or deleted.
  if (run.status === "awaiting-review") run = await syncLocalReview(ctx.deps, run);
  const limit = input.limit ?? DEFAULT_LIMIT;
  const events = await ctx.deps.db
    .select()
    .from(remediationEvents)
    .where(
      and(
        eq(remediationEvents.remediationId, run.id),
        input.after === undefined ? undefined : gt(remediationEvents.id, input.after),
      ),
    )
    .orderBy(asc(remediationEvents.id))
    .limit(limit + 1);
  return {
    remediationId: run.id,
    status: run.status,
    threadUrl: threadUrlFor(ctx.deps.config.baseUrl, run.id),
    prUrl: run.prUrl,
    messages: events.slice(0, limit).map((e) => ({
      id: e.id,
      at: e.at.toISOString(),
      from: authorOf(e.type),
      type: e.type,
      status: e.status,
      text: e.message,
      data: e.data,
    })),
    hasMore: events.length > limit,
  };
}
