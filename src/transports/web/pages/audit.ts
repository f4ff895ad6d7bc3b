import type { Context, Hono } from "hono";
import { listAuditEvents } from "../../../features/audit/list-audit-events.ts";
import { type AuditEvent, AuditEventQuery } from "../../../features/audit/schemas.ts";
import { listEnvironments } from "../../../features/environments/list-environments.ts";
import { auditActions, auditChannels } from "../../../platform/audit/actions.ts";
import type { WebEnv } from "../env.ts";
import { type FieldErrors, inputField, selectField } from "../forms.ts";
import { dataTable, type Html, html, nothing, when } from "../html.ts";
import { formatInstant } from "./logs.ts";
import { filteredPage, jsonText, pager } from "./telemetry-view.ts";

const names = ["environmentId", "actor", "action", "target", "channel", "from", "to", "cursor"] as const;

const channelLabels: Record<string, string> = {
  rest: "REST API",
  cli: "CLI",
  mcp: "MCP",
  web: "Web UI",
  x402: "x402",
  system: "System",
  unknown: "Unknown",
};

const auditPath = (c: Context<WebEnv>) => `/orgs/${c.get("org").id}/audit`;

function eventRow(e: AuditEvent, environmentNames: Map<string, string>): Html {
  const hasDetails = Object.keys(e.details).length > 0;
  return html`<tr>
    <td class="nowrap"><time datetime="${e.occurredAt}">${formatInstant(e.occurredAt)}</time></td>
    <td><code>${e.action}</code></td>
    <td>${e.actor.email ?? html`<code>${e.actor.id}</code>`}<br><span class="muted">${e.actor.type.replace("_", " ")}${when(
      e.actor.email,
      () => html` <code>${e.actor.id}</code>`,
    )}</span></td>
    <td><span class="badge">${channelLabels[e.channel] ?? e.channel}</span></td>
    <td>${e.target.type.replace("_", " ")}<br><code>${e.target.id}</code>${when(
      e.environmentId,
      () =>
        html`<br><span class="muted">${environmentNames.get(e.environmentId ?? "") ?? e.environmentId}</span>`,
    )}</td>
    <td>${hasDetails ? html`<details><summary>Details</summary><pre>${jsonText(e.details)}</pre></details>` : nothing}</td>
  </tr>`;
}

function filterForm(
  c: Context<WebEnv>,
  values: Record<string, string>,
  fields: FieldErrors,
  environments: readonly { id: string; name: string }[],
): Html {
  return html`<form method="get" action="${auditPath(c)}" class="filters" aria-label="Filters">
  <div class="filter-grid">
  ${selectField({
    name: "environmentId",
    label: "Environment",
    options: [{ value: "", label: "Any" }, ...environments.map((e) => ({ value: e.id, label: e.name }))],
    value: values.environmentId ?? "",
    error: fields.environmentId,
  })}
  ${inputField({ name: "actor", label: "Actor", value: values.actor, error: fields.actor, hint: "A member's email or user id, or a key's id" })}
  ${selectField({
    name: "action",
    label: "Action",
    options: [{ value: "", label: "Any" }, ...auditActions.map((a) => ({ value: a, label: a }))],
    value: values.action ?? "",
    error: fields.action,
  })}
  ${inputField({ name: "target", label: "Target id", value: values.target, error: fields.target, hint: "A connection, key, task… id" })}
  ${selectField({
    name: "channel",
    label: "Door",
    options: [
      { value: "", label: "Any" },
      ...auditChannels.map((value) => ({ value, label: channelLabels[value] ?? value })),
    ],
    value: values.channel ?? "",
    error: fields.channel,
  })}
  ${inputField({ name: "from", label: "From", value: values.from, error: fields.from, hint: "ISO 8601, e.g. 2026-11-22T09:00:00Z" })}
  ${inputField({ name: "to", label: "To", value: values.to, error: fields.to, hint: "Before this instant" })}
  </div>
  <div class="actions"><button type="submit" class="secondary">Search</button>
  <a href="${auditPath(c)}">Clear</a></div>
</form>`;
}

async function auditPage(c: Context<WebEnv>): Promise<Response> {
  const ctx = c.get("ctx");
  const organizationId = c.get("org").id;
  // Organisations have few environments; the filter offers the first 200 by name.
  const environments = (await listEnvironments({ ctx, input: { pageSize: 200 } })).items;
  const environmentNames = new Map(environments.map((e) => [e.id, e.name]));
  return filteredPage(c, {
    title: "Audit log",
    section: "audit",
    names,
    schema: AuditEventQuery,
    read: (input) => listAuditEvents({ ctx, input: { ...input, organizationId } }),
    form: (values, fields) => filterForm(c, values, fields, environments),
    show: (page, form, values) => ({
      lead: "Every change in this organisation: who made it, when, and through which door. Secrets are never recorded.",
      body: html`${form}
${dataTable({
  className: "audit",
  caption: "Audit events, newest first",
  headers: ["Time (UTC)", "Action", "Actor", "Door", "Target", "Details"],
  rows: page.items.map((e) => eventRow(e, environmentNames)),
  empty: html`<div class="card"><p>No audit events match these filters.</p></div>`,
})}
${pager(auditPath(c), values, page.nextCursor, "Older")}`,
    }),
  });
}

export function registerAuditPages(web: Hono<WebEnv>): void {
  web.get("/orgs/:orgId/audit", auditPage);
}
