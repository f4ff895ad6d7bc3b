import type { Context, Hono } from "hono";
import { listProblems } from "../../../features/telemetry/problems/list-problems.ts";
import { ProblemListQuerySchema, type ProblemSummary } from "../../../features/telemetry/problems/schemas.ts";
import { problemStatuses } from "../../../platform/db/schema/problems.ts";
import type { WebEnv } from "../env.ts";
import { errorSummary, type FieldErrors, inputField, selectField } from "../forms.ts";
import { formatTime, type Html, html, join } from "../html.ts";
import { renderPage } from "../layout.ts";
import { problemStatusBadge, remediationStateText } from "./problem-view.ts";
import {
  environmentPath,
  filterRefusal,
  firstPageLink,
  nextPageLink,
  parseFilters,
  queryValues,
} from "./telemetry-view.ts";

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

function filterForm(c: Context<WebEnv>, values: Record<string, string>, fields: FieldErrors): Html {
  return html`<form method="get" action="${environmentPath(c, "problems")}" class="filters" aria-label="Filters">
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
</form>`;
}

async function problemsPage(c: Context<WebEnv>): Promise<Response> {
  const values = queryValues(c, ["status", "service", "cursor"]);
  const filters = parseFilters(ProblemListQuerySchema, values);
  const ctx = c.get("ctx");
  const result = filters.ok
    ? await listProblems({
        ctx,
        input: { ...filters.input, environmentId: c.get("environment").current.id },
      }).then(
        (page) => ({ ok: true as const, page }),
        (error: unknown) => filterRefusal(error),
      )
    : filters;
  const path = environmentPath(c, "problems");
  const form = filterForm(c, values, result.ok ? {} : result.fields);
  if (!result.ok) {
    return renderPage(c, {
      title: "Problems",
      section: "problems",
      status: 400,
      body: html`${errorSummary(result.message, result.fields)}${form}`,
    });
  }
  const { page } = result;
  const filtered = Boolean(values.status || values.service || values.cursor);
  const body = html`${form}
${
  page.items.length === 0
    ? html`<div class="card"><p>${
        filtered
          ? "No problems match these filters."
          : html`No problems detected. Exceptions recorded on spans and error logs sent to this environment are grouped
      into problems here (keys and settings: <a href="${environmentPath(c, "telemetry-keys")}">telemetry keys</a>).`
      }</p></div>`
    : html`<table class="problems">
  <caption class="visually-hidden">Problems, most recently seen first</caption>
  <thead><tr><th scope="col">Problem</th><th scope="col">Service</th><th scope="col">Status</th><th scope="col">Count</th><th scope="col">Last seen</th><th scope="col">Remediation</th></tr></thead>
  <tbody>${join(page.items.map((p) => problemRow(c, p)))}</tbody>
</table>`
}
<div class="actions">${firstPageLink(path, values)}${nextPageLink(path, values, page.nextCursor)}</div>`;
  return renderPage(c, {
    title: "Problems",
    section: "problems",
    lead: "Exceptions grouped by where they happen, most recently seen first.",
    body,
  });
}

export function registerProblemListPage(web: Hono<WebEnv>): void {
  web.get("/orgs/:orgId/environments/:environmentId/problems", problemsPage);
}
