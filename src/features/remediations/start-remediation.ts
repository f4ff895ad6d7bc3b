import { and, eq, notInArray, type SQL } from "drizzle-orm";
import { requester } from "../../actor.ts";
import {
  requireOwnerOrAdmin,
  requirePermission,
  type ServiceContext,
  withTransaction,
} from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import type { Db } from "../../platform/db/client.ts";
import { environments } from "../../platform/db/schema/environments.ts";
import {
  type RemediationKind,
  remediations,
  terminalRemediationStatuses,
} from "../../platform/db/schema/remediations.ts";
import { callerEnvironment } from "../environments/index.ts";
import {
  findReferencedRepository,
  parseRepositoryReference,
  type RepositoryReference,
} from "../repositories/index.ts";
import { appendEvent, enqueueStep } from "./run-state.ts";
import { DEFAULT_REMEDIATION_BUDGETS, type Remediation } from "./schemas.ts";
import { startRefusal } from "./start-refusal.ts";
import { threadUrlFor, toRemediation } from "./to-remediation.ts";

type Budgets = Partial<typeof DEFAULT_REMEDIATION_BUDGETS>;

export type StartedRemediation = {
  run: Remediation;
  problem: { id: string; title: string; service: string };
};

/**
 * Starts an asynchronous remediation run for a problem of an environment (the one named, or a
 * paying wallet's default); the run, its first job and the audit entry commit together. One
 * unfinished run per problem: a second request while one works is `remediation_in_progress`
 * naming it (one awaiting review does not block a new run).
 */
export async function startRemediation(args: {
  ctx: ServiceContext;
  input: { environmentId?: string | undefined; problemId: string; budgets?: Budgets | undefined };
}): Promise<StartedRemediation> {
  const { ctx, input } = args;
  authorizeStart(ctx);
  // Lookups before the transaction: on PGlite (one connection) the evidence's own reads would wait forever.
  const environmentId = await callerEnvironment(ctx, input.environmentId);
  const scope = { organizationId: ctx.actor.organizationId, environmentId };
  const problem = await ctx.deps.remediation.evidence.getProblem(scope, input.problemId);
  if (!problem)
    throw new AppError("not_found", `Problem ${input.problemId} was not found in this environment.`);
  // After the lookups: an unknown problem is a 404 whatever the configuration.
  assertRunnable(ctx.deps);
  const run = await withTransaction(ctx, (tx) =>
    insertRun(tx, ctx, {
      kind: "fix",
      environmentId,
      problemId: input.problemId,
      service: problem.service,
      budgets: input.budgets,
      message: `Remediation of ${problem.id} (${problem.title}) requested.`,
      busy: {
        where: and(
          eq(remediations.problemId, input.problemId),
          notInArray(remediations.status, [...terminalRemediationStatuses, "awaiting-review"]),
        ),
        message: (id) => `Remediation ${id} is already working on this problem.`,
      },
    }),
  );
  return { run, problem: { id: problem.id, title: problem.title, service: problem.service } };
}

/**
 * Starts a run that adds OpenTelemetry instrumentation to a service's repository and proposes it
 * as a pull request (`POST /x402/instrumentation/pr`). The same steps as a fix: the repository
 * named (a registration's id, or an `owner/name` a human has yet to install the App on, select
 * and register: the run waits for that), else the one mapped to the service; the agent in a
 * sandbox, the repository's tests, a review a human merges. One unfinished run per service.
 */
export async function startInstrumentation(args: {
  ctx: ServiceContext;
  input: { environmentId?: string | undefined; service: string; repository?: string | undefined };
}): Promise<Remediation> {
  const { ctx, input } = args;
  authorizeStart(ctx);
  const named = input.repository === undefined ? undefined : parseRepositoryReference(input.repository);
  const environmentId = await callerEnvironment(ctx, input.environmentId);
  if (named) await assertConnectable(ctx, environmentId, named);
  // After the lookups: an unknown environment or repository is a 404 whatever the configuration.
  assertRunnable(ctx.deps);
  return withTransaction(ctx, (tx) =>
    insertRun(tx, ctx, {
      kind: "instrumentation",
      environmentId,
      problemId: null,
      service: input.service,
      requestedRepository: input.repository ?? null,
      message: `OpenTelemetry instrumentation for ${input.service}${input.repository ? ` in ${input.repository}` : ""} requested.`,
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

/**
 * A named repository is registered in the caller's environment, or can still be: an id must name
 * a registration there (another tenant's is unknown); an `owner/name` not registered yet waits
 * for a human, which needs a GitHub App on this service.
 */
async function assertConnectable(
  ctx: ServiceContext,
  environmentId: string,
  named: RepositoryReference,
): Promise<void> {
  const scope = { organizationId: ctx.actor.organizationId, environmentId };
  if (await findReferencedRepository(ctx.deps.db, scope, named)) return;
  if ("id" in named) {
    throw new AppError("not_found", `Repository ${named.id} was not found in this environment.`);
  }
  if (!ctx.deps.remediation.github) {
    throw new AppError(
      "provider_unavailable",
      `${named.fullName} is not registered here and no GitHub App is configured on this service to connect it; name a registered repository by its id (rep_…), or leave \`repository\` out to use the one mapped to the service.`,
    );
  }
}

/**
 * Who may start a run: `remediations:manage`, and among members only owners and admins (spec
 * 5.4); a paying wallet manages its own wallet-backed organisation.
 */
export function authorizeStart(ctx: ServiceContext): void {
  requirePermission(ctx, "remediations:manage");
  if (ctx.actor.type !== "wallet") requireOwnerOrAdmin(ctx);
}

/** The model and the sandbox every run needs, checked before anything is written (or charged). */
function assertRunnable(deps: Deps): void {
  const refusal = startRefusal(deps);
  if (refusal) throw refusal;
}

/**
 * A new queued run with its first progress event, its first job and its audit entry, in the
 * caller's transaction. Refused while an unfinished run of the same subject (`busy`) exists: the
 * environment row lock serialises starts, so two requests cannot both start one.
 */
async function insertRun(
  tx: Db,
  ctx: ServiceContext,
  run: {
    kind: RemediationKind;
    environmentId: string;
    problemId: string | null;
    service: string;
    requestedRepository?: string | null;
    budgets?: Budgets | undefined;
    message: string;
    busy: { where: SQL | undefined; message: (remediationId: string) => string };
  },
): Promise<Remediation> {
  const { deps } = ctx;
  await tx
    .select({ id: environments.id })
    .from(environments)
    .where(eq(environments.id, run.environmentId))
    .for("update");
  const [busy] = await tx
    .select({ id: remediations.id, status: remediations.status })
    .from(remediations)
    .where(and(eq(remediations.environmentId, run.environmentId), run.busy.where))
    .limit(1);
  if (busy) {
    throw new AppError("remediation_in_progress", run.busy.message(busy.id), {
      remediationId: busy.id,
      remediationStatus: busy.status,
      threadUrl: threadUrlFor(deps.config.baseUrl, busy.id),
    });
  }
  const now = deps.clock();
  const requestedBy = requester(ctx.actor);
  const [row] = await tx
    .insert(remediations)
    .values({
      id: newId("rem"),
      kind: run.kind,
      organizationId: ctx.actor.organizationId,
      environmentId: run.environmentId,
      problemId: run.problemId,
      service: run.service,
      requestedRepository: run.requestedRepository ?? null,
      status: "queued",
      requestedBy,
      budgets: { ...DEFAULT_REMEDIATION_BUDGETS, ...run.budgets },
      stepSeq: 1,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  if (!row) throw new Error("insert returned no row");
  const events = await appendEvent(tx, deps, row.id, {
    type: "created",
    status: "queued",
    message: run.message,
    data: { requestedBy },
  });
  await enqueueStep(tx, deps, row);
  await recordAudit(tx, ctx, {
    action: "remediation.created",
    targetType: "remediation",
    targetId: row.id,
    environmentId: run.environmentId,
    details: run.problemId
      ? { environmentId: run.environmentId, problemId: run.problemId }
      : {
          environmentId: run.environmentId,
          service: run.service,
          ...(run.requestedRepository ? { repository: run.requestedRepository } : {}),
        },
  });
  return toRemediation(deps.config.baseUrl, row, events);
}
