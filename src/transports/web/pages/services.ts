import type { Context, Hono } from "hono";
import { getServiceHealth } from "../../../features/telemetry/queries/get-service-health.ts";
import {
  type ServiceHealth,
  ServiceHealthQuerySchema,
  serviceHealthWindows,
} from "../../../features/telemetry/queries/schemas.ts";
import type { WebEnv } from "../env.ts";
import { selectField } from "../forms.ts";
import { dataTable, formatTime, type Html, html } from "../html.ts";
import {
  environmentPath,
  filteredPage,
  formatDuration,
  formatPercent,
  formatRate,
  pager,
  periodLabels,
  plural,
} from "./telemetry-view.ts";

function serviceRow(c: Context<WebEnv>, s: ServiceHealth): Html {
  const service = new URLSearchParams({ service: s.service }).toString();
  return html`<tr>
    <th scope="row">${s.service}<br><span class="muted"><a href="${environmentPath(c, "logs")}?${service}">logs</a> ·
      <a href="${environmentPath(c, "problems")}?${service}">problems</a></span></th>
    <td class="num">${formatRate(s.requestRate)}<br><span class="muted">${plural(s.requestCount, "request", "requests")}</span></td>
    <td class="num${s.errorCount > 0 ? " bad" : ""}">${formatPercent(s.errorRate)}<br><span class="muted">${plural(s.errorCount, "error", "errors")}</span></td>
    <td class="num">${s.latencyMs ? formatDuration(s.latencyMs.p50) : "—"}</td>
    <td class="num">${s.latencyMs ? formatDuration(s.latencyMs.p95) : "—"}</td>
    <td class="num">${s.latencyMs ? formatDuration(s.latencyMs.p99) : "—"}</td>
    <td>${formatTime(s.lastSeen)}</td>
  </tr>`;
}

/** What to do when nothing has arrived yet: the keys page has the settings to copy. */
const emptyState = (c: Context<WebEnv>): Html => html`<div class="card empty">
  <p><strong>No telemetry in this environment yet.</strong></p>
  <p>Create a key on the <a href="${environmentPath(c, "telemetry-keys")}">telemetry keys</a> page and point your
  OpenTelemetry SDK or Collector at patchbay:</p>
  <pre>OTEL_EXPORTER_OTLP_ENDPOINT=${c.get("deps").config.baseUrl}
OTEL_EXPORTER_OTLP_HEADERS="authorization=Bearer pk_…"</pre>
  <p class="muted">Services appear here with their first span or log record.</p>
</div>`;

const servicesPage = (c: Context<WebEnv>) =>
  filteredPage(c, {
    title: "Services",
    section: "services",
    names: ["window", "cursor"],
    schema: ServiceHealthQuerySchema,
    read: (input) =>
      getServiceHealth({
        ctx: c.get("ctx"),
        input: { ...input, environmentId: c.get("environment").current.id },
      }),
    form: (
      values,
      fields,
      input,
    ) => html`<form method="get" action="${environmentPath(c, "services")}" class="filters inline" aria-label="Window">
  ${selectField({
    name: "window",
    label: "Window",
    options: serviceHealthWindows.map((w) => ({ value: w, label: periodLabels[w] })),
    value: input?.window ?? values.window,
    error: fields.window,
  })}
  <div class="actions"><button type="submit" class="secondary">Show</button></div>
</form>`,
    show: (page, form, values) => ({
      lead: `Health of each service sending telemetry to ${c.get("environment").current.name}.`,
      body:
        page.items.length === 0 && !values.cursor
          ? emptyState(c)
          : html`${form}
${dataTable({
  className: "services",
  caption: `Service health, ${periodLabels[page.window].toLowerCase()}`,
  headers: ["Service", "Requests", "Errors", "p50", "p95", "p99", "Last seen"],
  rows: page.items.map((s) => serviceRow(c, s)),
})}
<p class="muted">${formatTime(page.from)} to ${formatTime(page.to)}. Requests are entry spans (server and consumer
spans, and trace roots); latency is their duration.</p>
${pager(environmentPath(c, "services"), values, page.nextCursor)}`,
    }),
  });

export function registerServicePages(web: Hono<WebEnv>): void {
  web.get("/orgs/:orgId/environments/:environmentId/services", servicesPage);
}
