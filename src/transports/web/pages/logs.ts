import type { Context, Hono } from "hono";
import { z } from "zod";
import { type LogRecordView, LogSearchQuerySchema } from "../../../features/telemetry/queries/schemas.ts";
import { searchLogs } from "../../../features/telemetry/queries/search-logs.ts";
import { severityNames } from "../../../features/telemetry/queries/severity.ts";
import type { WebEnv } from "../env.ts";
import { type FieldErrors, inputField, selectField } from "../forms.ts";
import { dataTable, type Html, hiddenText, html, nothing, when } from "../html.ts";
import { environmentPath, filteredPage, jsonText, pager, periodLabels } from "./telemetry-view.ts";

const MINUTE = 60_000;
/** The UI's range presets: how far back from `to` (default now) when no `from` is given. */
const ranges = {
  "15m": 15 * MINUTE,
  "1h": 60 * MINUTE,
  "6h": 360 * MINUTE,
  "24h": 1440 * MINUTE,
  "7d": 10_080 * MINUTE,
};
type Range = keyof typeof ranges;

/** The REST route's filters plus the page's range preset. */
const LogFiltersSchema = LogSearchQuerySchema.extend({
  range: z.enum(Object.keys(ranges) as [Range, ...Range[]]).default("1h"),
});

/** A record's time to the millisecond (the list is sorted by it; minutes would not tell rows apart). */
export function formatInstant(iso: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(\.\d{1,3})?/.exec(iso);
  return m ? `${m[1]} ${m[2]}${m[3] ?? ""}` : iso;
}

function logRow(c: Context<WebEnv>, log: LogRecordView): Html {
  const hasAttributes = Object.keys(log.attributes).length > 0;
  return html`<tr>
    <td class="nowrap"><time datetime="${log.time}">${formatInstant(log.time)}</time></td>
    <td><span class="badge sev-${log.severity}">${log.severityText ?? log.severity}</span></td>
    <td>${log.service}</td>
    <td><pre class="log-body">${log.body ?? ""}</pre>${when(
      hasAttributes || log.eventName || log.scope,
      () => html`<details><summary>Details</summary>
      <dl class="facts">${when(log.eventName, () => html`<dt>Event</dt><dd>${log.eventName}</dd>`)}${when(
        log.scope,
        () => html`<dt>Scope</dt><dd>${log.scope}</dd>`,
      )}${when(log.spanId, () => html`<dt>Span</dt><dd><code>${log.spanId}</code></dd>`)}</dl>
      ${when(hasAttributes, () => html`<pre>${jsonText(log.attributes)}</pre>`)}</details>`,
    )}</td>
    <td>${log.traceId ? html`<a href="${environmentPath(c, `traces/${log.traceId}`)}">Trace<span class="visually-hidden"> ${log.traceId}</span></a>` : nothing}</td>
  </tr>`;
}

function filterForm(c: Context<WebEnv>, values: Record<string, string>, fields: FieldErrors): Html {
  return html`<form method="get" action="${environmentPath(c, "logs")}" class="filters" aria-label="Filters">
  <div class="filter-grid">
  ${selectField({
    name: "range",
    label: "Time range",
    options: Object.keys(ranges).map((value) => ({ value, label: periodLabels[value as Range] })),
    value: values.range ?? "1h",
    error: fields.range,
  })}
  ${inputField({ name: "from", label: "From (optional)", value: values.from, error: fields.from, hint: "ISO 8601, e.g. 2026-11-22T09:00:00Z; replaces the range" })}
  ${inputField({ name: "to", label: "To (optional)", value: values.to, error: fields.to, hint: "Default: now" })}
  ${inputField({ name: "service", label: "Service", value: values.service, error: fields.service })}
  ${selectField({
    name: "severity",
    label: "Minimum severity",
    options: [
      { value: "", label: "Any" },
      ...severityNames.map((s) => ({ value: s, label: s.toUpperCase() })),
    ],
    value: values.severity ?? "",
    error: fields.severity,
  })}
  ${inputField({ name: "q", label: "Text", value: values.q, error: fields.q, hint: "Contained in the body, any case" })}
  ${inputField({ name: "traceId", label: "Trace id", value: values.traceId, error: fields.traceId, hint: "32 hexadecimal characters" })}
  </div>
  <div class="actions"><button type="submit" class="secondary">Search</button>
  <a href="${environmentPath(c, "logs")}">Clear</a></div>
</form>`;
}

const logsPage = (c: Context<WebEnv>) =>
  filteredPage(c, {
    title: "Logs",
    section: "logs",
    names: ["range", "from", "to", "service", "severity", "q", "traceId", "cursor"],
    schema: LogFiltersSchema,
    read: ({ range, ...input }) => {
      const to = input.to ? Date.parse(input.to) : c.get("deps").clock().getTime();
      const from = input.from ?? new Date(to - ranges[range]).toISOString();
      return searchLogs({
        ctx: c.get("ctx"),
        input: { ...input, environmentId: c.get("environment").current.id, from },
      });
    },
    form: (values, fields) => filterForm(c, values, fields),
    show: (page, form, values) => ({
      body: html`${form}
${dataTable({
  className: "logs",
  caption: "Log records, newest first",
  headers: ["Time (UTC)", "Severity", "Service", "Body", hiddenText("Trace")],
  rows: page.items.map((log) => logRow(c, log)),
  empty: html`<div class="card"><p>No log records match these filters.</p></div>`,
})}
${pager(environmentPath(c, "logs"), values, page.nextCursor, "Older")}`,
    }),
  });

export function registerLogPages(web: Hono<WebEnv>): void {
  web.get("/orgs/:orgId/environments/:environmentId/logs", logsPage);
}
