import type { Connection, Readiness } from "../../../features/connections/schemas.ts";
import { type Html, html } from "../html.ts";

/** Readiness in words, for the badge (the spec's state names are for machines). */
const readinessLabels: Record<Readiness, string> = {
  ready: "Ready",
  disabled: "Disabled",
  credential_missing: "Credential missing",
  approval_missing: "Approval missing",
  approval_stale: "Approval stale",
};

export const readinessBadge = (readiness: Readiness): Html =>
  html`<span class="badge ${readiness}">${readinessLabels[readiness]}</span>`;

export const authLabels = { none: "None", bearer: "Bearer token", api_key: "API-key header" } as const;

export function authSummary(connection: Connection): string {
  return connection.auth.kind === "api_key"
    ? `${authLabels.api_key} (${connection.auth.headerName ?? "?"})`
    : authLabels[connection.auth.kind];
}

/** The base path of an environment's connection pages. */
export const connectionsPath = (orgId: string, environmentId: string): string =>
  `/orgs/${orgId}/environments/${environmentId}/connections`;
