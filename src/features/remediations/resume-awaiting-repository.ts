import { and, eq, sql } from "drizzle-orm";
import type { Deps } from "../../deps.ts";
import type { Db } from "../../platform/db/client.ts";
import { remediations } from "../../platform/db/schema/remediations.ts";
import { moveIdle } from "./run-state.ts";

/**
 * A repository was registered: runs of the environment waiting for repository access to one of
 * its services go back to `queued` and start again, in the registering transaction.
 */
export async function resumeRunsAwaitingRepository(
  tx: Db,
  deps: Deps,
  args: { environmentId: string; services: string[] },
): Promise<void> {
  const waiting = await tx
    .select()
    .from(remediations)
    .where(
      and(
        eq(remediations.environmentId, args.environmentId),
        eq(remediations.status, "awaiting-approval"),
        sql`${remediations.approval}->>'kind' = 'repository_access'`,
      ),
    )
    .for("update");
  for (const run of waiting) {
    if (run.service && !args.services.includes(run.service)) continue;
    await moveIdle(
      tx,
      deps,
      run,
      "queued",
      { approval: null },
      {
        type: "approval_granted",
        message: `A repository was registered for service "${run.service}"; resuming.`,
        data: { kind: "repository_access" },
      },
    );
  }
}
