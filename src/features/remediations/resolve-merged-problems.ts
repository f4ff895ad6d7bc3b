import { and, eq, inArray, sql } from "drizzle-orm";
import type { Deps } from "../../deps.ts";
import type { Db } from "../../platform/db/client.ts";
import { problems } from "../../platform/db/schema/problems.ts";
import { remediations } from "../../platform/db/schema/remediations.ts";

/**
 * A person merged a fix: its problem (open or regressed) becomes `resolved`, in the same
 * transaction as the run's `merged`. If it happens again, ingest marks it `regressed` — which is
 * how a fix that did not hold shows. Returns the problems resolved.
 */
export async function resolveMergedProblems(
  tx: Db,
  deps: Pick<Deps, "clock">,
  runIds: string[],
): Promise<string[]> {
  if (runIds.length === 0) return [];
  const now = deps.clock();
  const fixed = tx
    .select({ problemId: remediations.problemId })
    .from(remediations)
    .where(
      and(inArray(remediations.id, runIds), eq(remediations.kind, "fix"), eq(remediations.status, "merged")),
    );
  const resolved = await tx
    .update(problems)
    .set({
      status: "resolved",
      revision: sql`${problems.revision} + 1`,
      resolvedAt: now,
      statusChangedAt: now,
      updatedAt: now,
    })
    .where(and(inArray(problems.id, fixed), inArray(problems.status, ["open", "regressed"])))
    .returning({ id: problems.id });
  return resolved.map((p) => p.id);
}
