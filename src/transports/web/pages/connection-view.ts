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

export const authLabels = {
  none: "No authentication",
  bearer: "Bearer token",
  api_key: "API-key header",
} as const;

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

/**
 * The next step as this UI offers it, with a link to the section of the connection's page that
 * does it. The API's `nextStep` is the specification's wording ("Start a new task…", "Attach or
 * replace the credential."); the UI starts no tasks and knows whether a credential was ever set.
 */
export function webNextStep(conn: Connection, base?: string): Html {
  const to = (section: string, text: string): Html =>
    base ? html`<a href="${base}/${conn.id}#${section}">${text}</a>` : html`${text}`;
  switch (conn.readiness) {
    case "ready":
      return html`Nothing to do: tasks started in this environment receive its approved tools (tasks are started
  through the API, <code>POST /api/v1/environments/${conn.environmentId}/tasks</code>).`;
    case "credential_missing":
      return conn.auth.credentialUpdatedAt
        ? html`${to("credential", "Set a new credential")}: the previous one no longer applies.`
        : html`${to("credential", "Attach a credential")}.`;
    case "approval_missing":
      return html`${to("tools", "Discover its tools")} and approve the ones the agent may use.`;
    case "approval_stale":
      return html`${to("tools", "Discover again")} and approve the current tools.`;
    case "disabled":
      return html`${to("enablement", "Enable it")} after reviewing the approved tools.`;
  }
}
