import { and, eq, notInArray } from "drizzle-orm";
import { withTransaction } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import { environments } from "../../platform/db/schema/environments.ts";
import { remediations, terminalRemediationStatuses } from "../../platform/db/schema/remediations.ts";
import { threadUrlFor } from "./approval-request.ts";
import { assertRunnable, insertRun } from "./start-remediation.ts";

export type StartedInstrumentation = {
  remediationId: string;
  threadUrl: string;
  status: "queued";
  service: string;
};

/**
 * Starts a run that adds OpenTelemetry instrumentation to a service's repository and proposes it
 * as a pull request (`POST /x402/instrumentation/pr`). The same steps as a fix: the repository
 * mapped to the service (or a human's approval to connect one), the agent in a sandbox, the
 * repository's tests, a review a human merges. One unfinished instrumentation run per service.
 */
export async function startInstrumentation(args: {
  deps: Deps;
  organizationId: string;
  environmentId: string;
  service: string;
  requestedBy: string;
}): Promise<StartedInstrumentation> {
  const { deps } = args;
  return withTransaction(deps.db, async (tx) => {
    // The environment row lock serialises starts, so two requests cannot both start a run.
    const [env] = await tx
      .select({ id: environments.id })
      .from(environments)
      .where(
        and(eq(environments.id, args.environmentId), eq(environments.organizationId, args.organizationId)),
      )
      .for("update");
    if (!env) throw new AppError("not_found", `Environment ${args.environmentId} was not found.`);
    // After the lookup: an unknown environment is a 404 whatever the configuration.
    assertRunnable(deps);
    const [busy] = await tx
      .select({ id: remediations.id, status: remediations.status })
      .from(remediations)
      .where(
        and(
          eq(remediations.environmentId, env.id),
          eq(remediations.kind, "instrumentation"),
          eq(remediations.service, args.service),
          notInArray(remediations.status, [...terminalRemediationStatuses]),
        ),
      )
      .limit(1);
    if (busy) {
      throw new AppError(
        "remediation_in_progress",
        `Run ${busy.id} is already adding instrumentation to ${args.service}.`,
        {
          remediationId: busy.id,
          remediationStatus: busy.status,
          threadUrl: threadUrlFor(deps.config.baseUrl, busy.id),
        },
      );
    }
    const row = await insertRun(tx, deps, {
      kind: "instrumentation",
      organizationId: args.organizationId,
      environmentId: env.id,
      problemId: null,
      service: args.service,
      requestedBy: args.requestedBy,
      budgets: undefined,
      message: `OpenTelemetry instrumentation for ${args.service} requested.`,
    });
    return {
      remediationId: row.id,
      threadUrl: threadUrlFor(deps.config.baseUrl, row.id),
      status: "queued" as const,
      service: args.service,
    };
  });
}
