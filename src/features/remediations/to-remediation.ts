import type { remediationEvents } from "../../platform/db/schema/remediations.ts";
import type { RemediationRow } from "./run-state.ts";
import type { Remediation, RemediationSummary } from "./schemas.ts";

/** The page an operator opens to act on a waiting run (built by the web UI). */
const approvalUrlFor = (baseUrl: string, remediationId: string) =>
  `${baseUrl}/remediations/${remediationId}/approval`;
export const threadUrlFor = (baseUrl: string, remediationId: string) =>
  `${baseUrl}/remediations/${remediationId}`;

export function toRemediationSummary(baseUrl: string, row: RemediationRow): RemediationSummary {
  return {
    id: row.id,
    remediationId: row.id,
    environmentId: row.environmentId,
    kind: row.kind,
    problemId: row.problemId,
    service: row.service,
    status: row.status,
    threadUrl: threadUrlFor(baseUrl, row.id),
    prUrl: row.prUrl,
    reasonCode: row.reasonCode,
    reason: row.reason,
    approval:
      row.status === "awaiting-approval" && row.approval
        ? {
            kind: row.approval.kind,
            message: row.approval.message,
            approvalUrl: approvalUrlFor(baseUrl, row.id),
            requestedAt: row.approval.requestedAt,
          }
        : null,
    repositoryId: row.repositoryId,
    requestedRepository: row.requestedRepository,
    branch: row.branch,
    baseCommit: row.baseCommit,
    headCommit: row.headCommit,
    change: row.change
      ? { summary: row.change.summary, files: row.change.files.map((f) => f.path), risk: row.change.risk }
      : null,
    validation: row.validation,
    verification: row.verification,
    watch: row.watch,
    taskId: row.taskId,
    budgets: row.budgets,
    requestedBy: row.requestedBy,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    finishedAt: row.finishedAt?.toISOString() ?? null,
  };
}

export function toRemediation(
  baseUrl: string,
  row: RemediationRow,
  events: (typeof remediationEvents.$inferSelect)[],
): Remediation {
  return {
    ...toRemediationSummary(baseUrl, row),
    events: events.map((e) => ({
      at: e.at.toISOString(),
      type: e.type,
      status: e.status,
      message: e.message,
      data: e.data,
    })),
  };
}
