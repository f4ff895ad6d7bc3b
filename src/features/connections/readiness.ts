import type { mcpConnections } from "../../platform/db/schema/mcp-connections.ts";
import type { Readiness } from "./schemas.ts";

type Row = typeof mcpConnections.$inferSelect;

export const needsCredential = (row: Pick<Row, "authKind">): boolean => row.authKind !== "none";
export const hasCredential = (row: Pick<Row, "credentialUpdatedAt">): boolean =>
  row.credentialUpdatedAt !== null;
export const hasApproval = (row: Pick<Row, "approvedManifestHash">): boolean =>
  row.approvedManifestHash !== null;
/** Endpoint or auth changed after approval: the approved manifest was made for another server. */
export const approvalIsStale = (
  row: Pick<Row, "approvedManifestHash" | "approvedConfigVersion" | "configVersion">,
) => row.approvedManifestHash !== null && row.approvedConfigVersion !== row.configVersion;

/**
 * Derived, never stored. DESIGN §5 precedence: the first condition that holds wins, because it
 * names the next step the owner has to take.
 */
export function deriveReadiness(row: Row): Readiness {
  if (needsCredential(row) && !hasCredential(row)) return "credential_missing";
  if (!hasApproval(row)) return "approval_missing";
  if (approvalIsStale(row)) return "approval_stale";
  if (!row.enabled) return "disabled";
  return "ready";
}

export const nextSteps: Record<Readiness, string> = {
  ready: "Start a new task in this environment.",
  disabled: "Enable after reviewing the current approval.",
  credential_missing: "Attach or replace the credential.",
  approval_missing: "Discover, select, approve.",
  approval_stale: "Discover and approve the current manifest again.",
};
