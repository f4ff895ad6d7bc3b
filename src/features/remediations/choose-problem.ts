import { and, desc, eq, inArray, notExists, notInArray, sql } from "drizzle-orm";
import type { Db } from "../../platform/db/client.ts";
import { problems } from "../../platform/db/schema/problems.ts";
import { remediations, terminalRemediationStatuses } from "../../platform/db/schema/remediations.ts";
import { problemColumns } from "../telemetry/index.ts";

/**
 * The problem a guided "fix it" (`POST /x402/resolve`) takes on when the agent names none: the
 * most recently seen open or regressed problem of the environment that no unfinished run is
 * already working on (a run awaiting review counts as working: its fix waits for a human).
 */
export async function chooseProblem(db: Db, environmentId: string) {
  const [row] = await db
    .select({
      id: problems.id,
      title: problems.title,
      service: problems.serviceName,
      status: problems.status,
      count: problems.count,
      remediationId: problemColumns.remediationId,
      remediationState: problemColumns.remediationState,
    })
    .from(problems)
    .where(
      and(
        eq(problems.environmentId, environmentId),
        inArray(problems.status, ["open", "regressed"]),
        notExists(
          db
            .select({ one: sql`1` })
            .from(remediations)
            .where(
              and(
                eq(remediations.environmentId, problems.environmentId),
                eq(remediations.problemId, problems.id),
                notInArray(remediations.status, [...terminalRemediationStatuses]),
              ),
            ),
        ),
      ),
    )
    .orderBy(desc(problems.lastSeen), desc(problems.count), desc(problems.id))
    .limit(1);
  return row;
}
