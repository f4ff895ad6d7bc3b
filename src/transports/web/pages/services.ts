import type { Context, Hono } from "hono";
import { getServiceHealth } from "../../../features/telemetry/queries/get-service-health.ts";
import {
  type ServiceHealth,
  ServiceHealthQuerySchema,
  serviceHealthWindows,
} from "../../../features/telemetry/queries/schemas.ts";
import type { WebEnv } from "../env.ts";
import { errorSummary, selectField } from "../forms.ts";
import { formatTime, type Html, html, join } from "../html.ts";
import { renderPage } from "../layout.ts";
import {
  environmentPath,
  filterRefusal,
  firstPageLink,
  formatDuration,
  formatPercent,
  formatRate,
  nextPageLink,
  parseFilters,
  plural,
  queryValues,
} from "./telemetry-view.ts";

const windowLabels: Record<(typeof serviceHealthWindows)[number], string> = {
  "5m": "Last 5 minutes",
  "15m": "Last 15 minutes",
  "1h": "Last hour",
  "6h": "Last 6 hours",
  "24h": "Last 24 hours",
  "7d": "Last 7 days",
};

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

async function servicesPage(c: Context<WebEnv>): Promise<Response> {
  const values = queryValues(c, ["window", "cursor"]);
  const path = environmentPath(c, "services");
  const filters = parseFilters(ServiceHealthQuerySchema, values);
  const ctx = c.get("ctx");
  const environmentId = c.get("environment").current.id;
  const result = filters.ok
    ? await getServiceHealth({ ctx, input: { ...filters.input, environmentId } }).then(
        (page) => ({ ok: true as const, page }),
        (error: unknown) => filterRefusal(error),
      )
    : filters;
  const form = html`<form method="get" action="${path}" class="filters inline" aria-label="Window">
  ${selectField({
    name: "window",
    label: "Window",
    options: serviceHealthWindows.map((w) => ({ value: w, label: windowLabels[w] })),
    value: filters.ok ? filters.input.window : values.window,
    error: result.ok ? undefined : result.fields.window,
  })}
  <div class="actions"><button type="submit" class="secondary">Show</button></div>
</form>`;
  if (!result.ok) {
    return renderPage(c, {
      title: "Services",
      section: "services",
      status: 400,
      body: html`${errorSummary(result.message, result.fields)}${form}`,
    });
  }
  const { page } = result;
  const body =
    page.items.length === 0 && !values.cursor
      ? emptyState(c)
      : html`${form}
<table class="services">
  <caption class="visually-hidden">Service health, ${windowLabels[page.window].toLowerCase()}</caption>
  <thead><tr><th scope="col">Service</th><th scope="col">Requests</th><th scope="col">Errors</th>
  <th scope="col">p50</th><th scope="col">p95</th><th scope="col">p99</th><th scope="col">Last seen</th></tr></thead>
  <tbody>${join(page.items.map((s) => serviceRow(c, s)))}</tbody>
</table>
<p class="muted">${formatTime(page.from)} to ${formatTime(page.to)}. Requests are entry spans (server and consumer
spans, and trace roots); latency is their duration.</p>
<div class="actions">${firstPageLink(path, values)}${nextPageLink(path, values, page.nextCursor)}</div>`;
  return renderPage(c, {
    title: "Services",
    section: "services",
    lead: `Health of each service sending telemetry to ${c.get("environment").current.name}.`,
    body,
  });
}

export function registerServicePages(web: Hono<WebEnv>): void {
  web.get("/orgs/:orgId/environments/:environmentId/services", servicesPage);
}
