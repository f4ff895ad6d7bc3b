import { and, eq } from "drizzle-orm";
import { AppError } from "../../../errors.ts";
import type { Db } from "../../../platform/db/client.ts";
import { problems } from "../../../platform/db/schema/problems.ts";
import { problemColumns } from "./problem-columns.ts";
import type { Problem } from "./schemas.ts";
import { toProblem } from "./to-problem.ts";

/** One problem of the environment with its stack trace, sample trace ids and remediation state. */
export async function getProblem(args: {
  db: Db;
  environmentId: string;
  input: { problemId: string };
}): Promise<Problem> {
  const [row] = await args.db
    .select(problemColumns)
    .from(problems)
    .where(and(eq(problems.id, args.input.problemId), eq(problems.environmentId, args.environmentId)));
  if (!row) throw new AppError("not_found", `Problem ${args.input.problemId} was not found.`);
  return toProblem(row);
}
