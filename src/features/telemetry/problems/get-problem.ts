import { and, eq } from "drizzle-orm";
import { requirePermission } from "../../../context.ts";
import { AppError } from "../../../errors.ts";
import { problems } from "../../../platform/db/schema/problems.ts";
import { callerEnvironment } from "../../environments/index.ts";
import type { EnvironmentRead } from "../queries/schemas.ts";
import { problemColumns, toProblem } from "./problem-columns.ts";
import type { Problem } from "./schemas.ts";

/** One problem of the environment with its stack trace, sample trace ids and remediation state. */
export async function getProblem({ ctx, input }: EnvironmentRead<{ problemId: string }>): Promise<Problem> {
  requirePermission(ctx, "telemetry:read");
  const environmentId = await callerEnvironment(ctx, input.environmentId);
  const [row] = await ctx.deps.db
    .select(problemColumns)
    .from(problems)
    .where(and(eq(problems.id, input.problemId), eq(problems.environmentId, environmentId)));
  if (!row) throw new AppError("not_found", `Problem ${input.problemId} was not found.`);
  return toProblem(row);
}
