import { and, eq, sql } from "drizzle-orm";
import type { Deps } from "../../deps.ts";
import type { Db } from "../../platform/db/client.ts";
import { remediations } from "../../platform/db/schema/remediations.ts";
import { moveIdle } from "./run-state.ts";

/**
 * A repository was registered: runs of the environment waiting for repository access go back to
 * `queued` and start again, in the registering transaction — a run that named a repository when
 * the registration is that one, any other when it maps the run's service.
 */
export async function resumeRunsAwaitingRepository(
  tx: Db,
  deps: Deps,
  args: { environmentId: string; services: string[]; repositoryId: string; fullName: string | null },
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
  const { fullName } = args;
  for (const run of waiting) {
    const named = run.requestedRepository;
    const wanted = named
      ? named === args.repositoryId || (fullName !== null && named.toLowerCase() === fullName.toLowerCase())
      : !run.service || args.services.includes(run.service);
    if (!wanted) continue;
    const what = named
      ? `Repository ${named} was registered`
      : `A repository was registered for service "${run.service}"`;
    await moveIdle(
      tx,
      deps,
      run,
      "queued",
      { approval: null },
      {
        type: "approval_granted",
        message: `${what}; resuming.`,
        data: { kind: "repository_access" },
      },
    );
  }
}
