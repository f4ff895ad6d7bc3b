/**
 * Every action an audit row may name: a closed list, so the trail's `action` filter can refuse a
 * misspelt one (400) instead of answering an empty page that looks like "nothing happened", and a
 * writer cannot invent a name no reader knows.
 */
export const auditActions = [
  "organization.bootstrapped",
  "organization.signed_up",
  "organization.claimed",
  "member.invited",
  "member.invitation_revoked",
  "member.joined",
  "member.role_changed",
  "member.removed",
  "api_key.created",
  "api_key.revoked",
  "oauth.grant.created",
  "environment.created",
  "environment.renamed",
  "publishable_key.created",
  "publishable_key.revoked",
  "mcp_connection.created",
  "mcp_connection.updated",
  "mcp_connection.discovered",
  "mcp_connection.tools_approved",
  "mcp_connection.tools_attested_read_only",
  "mcp_connection.enabled",
  "mcp_connection.disabled",
  "mcp_connection.credential_set",
  "mcp_connection.credential_rotated",
  "mcp_connection.credential_upload_prepared",
  "mcp_connection.deletion_previewed",
  "mcp_connection.deleted",
  "task.created",
  "task.cancel_requested",
  "task.call_approved",
  "task.call_rejected",
  "problem.status_changed",
  "repository.created",
  "repository.deleted",
  "github_installation.linked",
  "remediation.created",
  "remediation.approved",
  "remediation.cancel_requested",
  "onboarding.started",
  "webhook_endpoint.created",
  "webhook_endpoint.updated",
  "webhook_endpoint.deleted",
  "webhook_endpoint.secret_rotated",
  "webhook_delivery.redelivered",
] as const;

export type AuditAction = (typeof auditActions)[number];

/** The doors a row may name: the request's channel, or `unknown` on rows older than the column. */
export const auditChannels = ["rest", "cli", "mcp", "web", "x402", "system", "unknown"] as const;
export type AuditChannel = (typeof auditChannels)[number];
