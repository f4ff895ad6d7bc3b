import { and, eq, notInArray } from "drizzle-orm";
import { withTransaction } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import type { Db } from "../../platform/db/client.ts";
import { environments } from "../../platform/db/schema/environments.ts";
import {
  type RemediationKind,
  remediations,
  terminalRemediationStatuses,
} from "../../platform/db/schema/remediations.ts";
import { threadUrlFor } from "./approval-request.ts";
import { appendEvent, enqueueStep, type RemediationRow } from "./run-state.ts";
import { DEFAULT_REMEDIATION_BUDGETS } from "./schemas.ts";

/** The model and the sandbox every run needs, checked before anything is written (or charged). */
export function assertRunnable(deps: Deps) {
  if (!deps.languageModel) {
    throw new AppError(
      "model_not_configured",
      "No model is configured for the remediation agent; set PATCHBAY_MODEL (and the provider's key) and restart.",
    );
  }
  const services = deps.remediation;
  if (services.sandbox.kind === "unavailable") {
    throw new AppError(
      "sandbox_unavailable",
      "No sandbox is available on this service to run repository code (see PATCHBAY_SANDBOX in docs/remediation.md).",
    );
  }
  return services;
}

/** A new queued run with its first progress event and first job, in the caller's transaction. */
export async function insertRun(
  tx: Db,
  deps: Deps,
  run: {
    kind: RemediationKind;
    organizationId: string;
    environmentId: string;
    problemId: string | null;
    service: string;
    requestedBy: string;
    budgets: Partial<typeof DEFAULT_REMEDIATION_BUDGETS> | undefined;
    message: string;
  },
): Promise<RemediationRow> {
  const now = deps.clock();
  const [row] = await tx
    .insert(remediations)
    .values({
      id: newId("rem"),
      kind: run.kind,
      organizationId: run.organizationId,
      environmentId: run.environmentId,
      problemId: run.problemId,
      service: run.service,
      status: "queued",
      requestedBy: run.requestedBy,
      budgets: { ...DEFAULT_REMEDIATION_BUDGETS, ...run.budgets },
      stepSeq: 1,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  if (!row) throw new Error("insert returned no row");
  await appendEvent(tx, deps, row.id, {
    type: "created",
    status: "queued",
    message: run.message,
    data: { requestedBy: run.requestedBy },
  });
  await enqueueStep(tx, deps, row);
  return row;
}

export type StartedRemediation = {
  remediationId: string;
  threadUrl: string;
  status: "queued";
  problem: { id: string; title: string; service: string };
};

/**
 * Starts an asynchronous remediation run for a problem of an environment. Transport-neutral:
 * the REST route calls it for a person (after permission checks), the paid x402 route for a
 * wallet principal; `requestedBy` names who (`usr_…` or `wallet:<network>:<address>`). The run
 * and its first job commit together. One unfinished run per problem: a second request while
 * one works is `remediation_in_progress` naming it.
 */
export async function startRemediation(args: {
  deps: Deps;
  organizationId: string;
  environmentId: string;
  problemId: string;
  requestedBy: string;
  budgets?: Partial<typeof DEFAULT_REMEDIATION_BUDGETS> | undefined;
  /** More writes in the run's transaction (an audit entry): committed with the run or not at all. */
  alsoInTransaction?: (tx: Db, started: StartedRemediation) => Promise<void>;
}): Promise<StartedRemediation> {
  const { deps } = args;
  const services = deps.remediation;
  const scope = { organizationId: args.organizationId, environmentId: args.environmentId };
  // Every lookup before the transaction: on PGlite (one connection) a read outside an open
  // transaction would wait for it forever, and the evidence reads through its own handle.
  const [env] = await deps.db
    .select({ id: environments.id })
    .from(environments)
    .where(
      and(eq(environments.id, args.environmentId), eq(environments.organizationId, args.organizationId)),
    );
  if (!env) throw new AppError("not_found", `Environment ${args.environmentId} was not found.`);
  const problem = await services.evidence.getProblem(scope, args.problemId);
  if (!problem)
    throw new AppError("not_found", `Problem ${args.problemId} was not found in this environment.`);
  // After the lookups: an unknown problem is a 404 whatever the configuration; nothing is written
  // (or charged) before this check either way.
  assertRunnable(deps);

  const run = async (tx: Db) => {
    // The environment row lock serialises starts, so two requests cannot both start a run.
    await tx
      .select({ id: environments.id })
      .from(environments)
      .where(eq(environments.id, env.id))
      .for("update");
    const [busy] = await tx
      .select({ id: remediations.id, status: remediations.status })
      .from(remediations)
      .where(
        and(
          eq(remediations.environmentId, env.id),
          eq(remediations.problemId, args.problemId),
          notInArray(remediations.status, [...terminalRemediationStatuses, "awaiting-review"]),
        ),
      )
      .limit(1);
    if (busy) {
      throw new AppError(
        "remediation_in_progress",
        `Remediation ${busy.id} is already working on this problem.`,
        {
          remediationId: busy.id,
          remediationStatus: busy.status,
          threadUrl: threadUrlFor(deps.config.baseUrl, busy.id),
        },
      );
    }
    const row = await insertRun(tx, deps, {
      kind: "fix",
      organizationId: args.organizationId,
      environmentId: env.id,
      problemId: args.problemId,
      service: problem.service,
      requestedBy: args.requestedBy,
      budgets: args.budgets,
      message: `Remediation of ${problem.id} (${problem.title}) requested.`,
    });
    const started: StartedRemediation = {
      remediationId: row.id,
      threadUrl: threadUrlFor(deps.config.baseUrl, row.id),
      status: "queued",
      problem: { id: problem.id, title: problem.title, service: problem.service },
    };
    await args.alsoInTransaction?.(tx, started);
    return started;
  };
  return withTransaction(deps.db, run);
}
