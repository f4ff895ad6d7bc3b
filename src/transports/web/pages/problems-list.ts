import type { Context, Hono } from "hono";
import { listProblems } from "../../../features/telemetry/problems/list-problems.ts";
import { ProblemListQuerySchema, type ProblemSummary } from "../../../features/telemetry/problems/schemas.ts";
import { problemStatuses } from "../../../platform/db/schema/problems.ts";
import type { WebEnv } from "../env.ts";
import { inputField, selectField } from "../forms.ts";
import { dataTable, formatTime, type Html, html } from "../html.ts";
import { problemStatusBadge, remediationStateText } from "./problem-view.ts";
import { environmentPath, filteredPage, pager } from "./telemetry-view.ts";

function problemRow(c: Context<WebEnv>, p: ProblemSummary): Html {
  return html`<tr>
    <td><a href="${environmentPath(c, `problems/${p.id}`)}">${p.title}</a><br><code class="muted">${p.culprit}</code></td>
    <td>${p.service}</td>
    <td>${problemStatusBadge(p.status)}</td>
    <td class="num">${p.count}</td>
    <td>${formatTime(p.lastSeen)}<br><span class="muted">first ${formatTime(p.firstSeen)}</span></td>
    <td>${remediationStateText(p.remediationState)}</td>
  </tr>`;
}

const problemsPage = (c: Context<WebEnv>) =>
  filteredPage(c, {
    title: "Problems",
    section: "problems",
    names: ["status", "service", "cursor"],
    schema: ProblemListQuerySchema,
    read: (input) =>
      listProblems({
        ctx: c.get("ctx"),
        input: { ...input, environmentId: c.get("environment").current.id },
      }),
    form: (
      values,
      fields,
    ) => html`<form method="get" action="${environmentPath(c, "problems")}" class="filters" aria-label="Filters">
  <div class="filter-grid">
  ${selectField({
    name: "status",
    label: "Status",
    options: [{ value: "", label: "Any" }, ...problemStatuses.map((s) => ({ value: s, label: s }))],
    value: values.status ?? "",
    error: fields.status,
  })}
  ${inputField({ name: "service", label: "Service", value: values.service, error: fields.service })}
  </div>
  <div class="actions"><button type="submit" class="secondary">Filter</button>
  <a href="${environmentPath(c, "problems")}">Clear</a></div>
</form>`,
    show: (page, form, values) => ({
      lead: "Exceptions grouped by where they happen, most recently seen first.",
      body: html`${form}
${dataTable({
  className: "problems",
  caption: "Problems, most recently seen first",
  headers: ["Problem", "Service", "Status", "Count", "Last seen", "Remediation"],
  rows: page.items.map((p) => problemRow(c, p)),
  empty: html`<div class="card"><p>${
    values.status || values.service || values.cursor
      ? "No problems match these filters."
      : html`No problems detected. Exceptions recorded on spans and error logs sent to this environment are grouped
      into problems here (keys and settings: <a href="${environmentPath(c, "telemetry-keys")}">telemetry keys</a>).`
  }</p></div>`,
})}
${pager(environmentPath(c, "problems"), values, page.nextCursor)}`,
    }),
  });

export function registerProblemListPage(web: Hono<WebEnv>): void {
  web.get("/orgs/:orgId/environments/:environmentId/problems", problemsPage);
}
