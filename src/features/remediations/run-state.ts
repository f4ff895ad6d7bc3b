import { and, eq, notInArray, type SQL, sql } from "drizzle-orm";
import { withTransaction } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import type { Db } from "../../platform/db/client.ts";
import {
  type RemediationStatus,
  remediationEvents,
  remediations,
  terminalRemediationStatuses,
} from "../../platform/db/schema/remediations.ts";
import { REMEDIATION_QUEUE, RunTakenOver } from "../tasks/index.ts";
import { emitWebhookEventBestEffort, type WebhookEventType } from "../webhooks/index.ts";

export type RemediationRow = typeof remediations.$inferSelect;

/** Statuses in which a worker has a step to run. */
export const workingStatuses: readonly RemediationStatus[] = [
  "queued",
  "investigating",
  "coding",
  "validating",
  "opening-pr",
];

/** The worker's hold on a run: the step it runs and its fencing token. */
export type Claim = { id: string; stepSeq: number; lease: number };

/** Another worker has taken the run (a newer lease) or the step moved on; ends the agent's task run too. */
export class LostClaim extends RunTakenOver {
  constructor(id: string) {
    super(`remediation ${id}: another worker holds this run now`);
    this.name = "LostClaim";
  }
}

export type RemediationEvent = {
  type: string;
  message: string;
  status?: RemediationStatus | undefined;
  data?: Record<string, unknown> | undefined;
};

export const CANCELLED: RemediationEvent = { type: "cancelled", message: "Cancelled on request." };

type Patch = Partial<Omit<typeof remediations.$inferInsert, "id" | "stepSeq" | "lease">>;

/**
 * Takes the run for step `stepSeq`: raises the lease, fencing out any earlier holder of the same
 * step (a worker pg-boss gave up on). Undefined when the job is stale: the run moved on, or ended.
 */
export async function claimStep(
  db: Db,
  job: { remediationId: string; stepSeq: number },
): Promise<RemediationRow | undefined> {
  const [row] = await db
    .update(remediations)
    .set({ lease: sql`${remediations.lease} + 1` })
    .where(
      and(
        eq(remediations.id, job.remediationId),
        eq(remediations.stepSeq, job.stepSeq),
        notInArray(remediations.status, [...terminalRemediationStatuses]),
      ),
    )
    .returning();
  return row;
}

const holds = (claim: Claim) =>
  and(
    eq(remediations.id, claim.id),
    eq(remediations.stepSeq, claim.stepSeq),
    eq(remediations.lease, claim.lease),
  );

/** Writes within the current step (no step change) only while the claim holds; LostClaim when fenced out. */
export const updateHeld = (deps: Deps, claim: Claim, patch: Patch, event?: RemediationEvent) =>
  withTransaction(deps.db, (tx) => touchHeld(tx, deps, claim, event, patch));

/** Inside the caller's transaction: keeps the claim alive (or throws LostClaim) and logs an event. */
export async function touchHeld(
  tx: Db,
  deps: Deps,
  claim: Claim,
  event?: RemediationEvent,
  patch: Patch = {},
): Promise<RemediationRow> {
  const [row] = await tx
    .update(remediations)
    .set({ ...patch, updatedAt: deps.clock() })
    .where(holds(claim))
    .returning();
  if (!row) throw new LostClaim(claim.id);
  if (event) await appendEvent(tx, deps, claim.id, event);
  return row;
}

/**
 * Ends the current step: moves the run to `status` with `patch`, records the event, and — when
 * the new status has work — enqueues the next step's job, all in one transaction under the
 * claim. A step's effects and its successor's job therefore commit together or not at all.
 */
export async function advance(
  deps: Deps,
  claim: Claim,
  status: RemediationStatus,
  patch: Patch,
  event: RemediationEvent,
): Promise<RemediationRow> {
  return withTransaction(deps.db, async (tx) => {
    const [held] = await tx
      .select({ cancelRequestedAt: remediations.cancelRequestedAt })
      .from(remediations)
      .where(holds(claim))
      .for("update");
    if (!held) throw new LostClaim(claim.id);
    // A cancellation requested while the step ran wins over moving on to more work.
    if (held.cancelRequestedAt && workingStatuses.includes(status)) {
      return move(tx, deps, claim.id, holds(claim), "cancelled", {}, CANCELLED);
    }
    return move(tx, deps, claim.id, holds(claim), status, patch, event);
  });
}

/** Ends the step with the run `failed`: a stable code and the reason, also the event's message. */
export const failRun = (
  deps: Deps,
  claim: Claim,
  code: string,
  reason: string,
  data?: Record<string, unknown>,
) => advance(deps, claim, "failed", { reasonCode: code, reason }, { type: "failed", message: reason, data });

/** Moves a run that no worker holds (queued, waiting) inside the caller's transaction. */
export function moveIdle(
  tx: Db,
  deps: Deps,
  run: RemediationRow,
  status: RemediationStatus,
  patch: Patch,
  event: RemediationEvent,
): Promise<RemediationRow> {
  const idle = and(eq(remediations.id, run.id), eq(remediations.stepSeq, run.stepSeq));
  return move(tx, deps, run.id, idle, status, patch, event);
}

/** Moves the run `where` matches on: status, event, next job. LostClaim when it no longer matches. */
async function move(
  tx: Db,
  deps: Deps,
  id: string,
  where: SQL | undefined,
  status: RemediationStatus,
  patch: Patch,
  event: RemediationEvent,
): Promise<RemediationRow> {
  const now = deps.clock();
  const [row] = await tx
    .update(remediations)
    .set({
      ...patch,
      status,
      stepSeq: sql`${remediations.stepSeq} + 1`,
      updatedAt: now,
      ...((terminalRemediationStatuses as readonly string[]).includes(status) ? { finishedAt: now } : {}),
    })
    .where(where)
    .returning();
  if (!row) throw new LostClaim(id);
  await appendEvent(tx, deps, id, { ...event, status });
  if (workingStatuses.includes(status)) await enqueueStep(tx, deps, row);
  await emitRunEvent(tx, deps, row);
  return row;
}

/** The statuses a person (or their pager) is told about, and the event each one is. */
const notified: Partial<Record<RemediationStatus, WebhookEventType>> = {
  "awaiting-approval": "operator_approval.requested",
  "awaiting-review": "pull_request.awaiting_review",
  failed: "remediation.failed",
};

/**
 * The webhook event of a run that reached a status someone must hear about, into the outbox of
 * the transaction that moved it: sent iff the move commits, never failing it (best-effort).
 */
async function emitRunEvent(tx: Db, deps: Deps, row: RemediationRow): Promise<void> {
  const type = notified[row.status];
  if (!type) return;
  const base = {
    organizationId: row.organizationId,
    environmentId: row.environmentId,
    remediationId: row.id,
    problemId: row.problemId,
    status: row.status,
    url: `${deps.config.baseUrl}/orgs/${row.organizationId}/environments/${row.environmentId}/remediations/${row.id}`,
  };
  const data =
    type === "operator_approval.requested"
      ? {
          ...base,
          step: "approve_change",
          approval: row.approval ? { kind: row.approval.kind, message: row.approval.message } : null,
        }
      : type === "pull_request.awaiting_review"
        ? { ...base, step: "review_pull_request", pullRequestUrl: row.prUrl }
        : { ...base, reasonCode: row.reasonCode, reason: row.reason };
  await emitWebhookEventBestEffort(tx, deps.logger, {
    organizationId: row.organizationId,
    type,
    data,
    at: deps.clock(),
  });
}

export async function enqueueStep(tx: Db, deps: Deps, row: RemediationRow): Promise<void> {
  await deps.jobs.send(
    REMEDIATION_QUEUE,
    { remediationId: row.id, stepSeq: row.stepSeq },
    { tx, singletonKey: row.id },
  );
}

/** Records a progress event in the caller's transaction; returns it as a one-row list. */
export function appendEvent(
  tx: Db,
  deps: Pick<Deps, "clock">,
  remediationId: string,
  event: RemediationEvent,
) {
  return tx
    .insert(remediationEvents)
    .values({
      remediationId,
      at: deps.clock(),
      type: event.type,
      status: event.status ?? null,
      message: event.message,
      data: event.data ?? null,
    })
    .returning();
}
