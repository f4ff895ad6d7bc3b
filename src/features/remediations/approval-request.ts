import type { Deps } from "../../deps.ts";
import type { ApprovalKind, RemediationApproval } from "../../platform/db/schema/remediations.ts";

export const approvalRequest = (
  deps: Pick<Deps, "clock">,
  kind: ApprovalKind,
  message: string,
): RemediationApproval => ({
  kind,
  requestedAt: deps.clock().toISOString(),
  message,
});

/** The page an operator opens to act on a waiting run (built by the web UI). */
export const approvalUrlFor = (baseUrl: string, remediationId: string) =>
  `${baseUrl}/remediations/${remediationId}/approval`;
export const threadUrlFor = (baseUrl: string, remediationId: string) =>
  `${baseUrl}/remediations/${remediationId}`;
