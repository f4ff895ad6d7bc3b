import { and, eq, notInArray } from "drizzle-orm";
import { type ServiceContext, withTransaction } from "../../context.ts";
import { remediations, terminalRemediationStatuses } from "../../platform/db/schema/remediations.ts";
import { callerEnvironment } from "../environments/find-environment.ts";
import type { Remediation } from "./schemas.ts";
import { assertRunnable, authorizeStart, insertRun } from "./start-remediation.ts";

/**
 * Starts a run that adds OpenTelemetry instrumentation to a service's repository and proposes it
 * as a pull request (`POST /x402/instrumentation/pr`). The same steps as a fix: the repository
 * mapped to the service (or a human's approval to connect one), the agent in a sandbox, the
 * repository's tests, a review a human merges. One unfinished instrumentation run per service.
 */
export async function startInstrumentation(args: {
  ctx: ServiceContext;
  input: { environmentId?: string | undefined; service: string };
}): Promise<Remediation> {
  const { ctx, input } = args;
  authorizeStart(ctx);
  const environmentId = await callerEnvironment(ctx, input.environmentId);
  // After the lookup: an unknown environment is a 404 whatever the configuration.
  assertRunnable(ctx.deps);
  return withTransaction(ctx, (tx) =>
    insertRun(tx, ctx, {
      kind: "instrumentation",
      environmentId,
      problemId: null,
      service: input.service,
      message: `OpenTelemetry instrumentation for ${input.service} requested.`,
      busy: {
        where: and(
          eq(remediations.kind, "instrumentation"),
          eq(remediations.service, input.service),
          notInArray(remediations.status, [...terminalRemediationStatuses]),
        ),
        message: (id) => `Run ${id} is already adding instrumentation to ${input.service}.`,
      },
    }),
  );
}
