import type { Connection, Readiness } from "../../../features/connections/schemas.ts";
import { formatTime, type Html, html } from "../html.ts";

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

/**
 * What tasks' calls saw of the server, as a badge and words: the credential-rejected condition
 * first, then a run of failures, then the last success. Never part of readiness.
 */
export function healthSummary(conn: Connection, long = false): Html {
  const h = conn.health;
  if (h.credentialRejected) {
    return html`<span class="badge no">Credential rejected</span>${
      long && h.credentialRejectedAt
        ? html` <span class="muted">since ${formatTime(h.credentialRejectedAt)}; set a new credential</span>`
        : ""
    }`;
  }
  if (h.consecutiveFailures > 0) {
    return html`<span class="badge approval_stale">${h.consecutiveFailures} failed</span> <span class="muted">${
      h.lastFailureCode ?? ""
    }${long && h.lastFailureAt ? `, last ${formatTime(h.lastFailureAt)}` : ""}</span>`;
  }
  if (h.lastSuccessAt) {
    return html`<span class="badge ready">OK</span>${
      long ? html` <span class="muted">last call ${formatTime(h.lastSuccessAt)}</span>` : ""
    }`;
  }
  return html`<span class="muted">No calls yet</span>`;
}
