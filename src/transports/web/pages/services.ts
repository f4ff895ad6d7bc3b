import type { Context, Hono } from "hono";
import { getServiceHealth } from "../../../features/telemetry/queries/get-service-health.ts";
import {
  getServiceSeries,
  SERIES_BUCKETS,
  type ServicePoint,
  type ServiceSeries,
} from "../../../features/telemetry/queries/get-service-series.ts";
import {
  type ServiceHealth,
  ServiceHealthQuerySchema,
  serviceHealthWindows,
} from "../../../features/telemetry/queries/schemas.ts";
import { bucketValues, timeChart } from "../charts.ts";
import type { WebEnv } from "../env.ts";
import { selectField } from "../forms.ts";
import { dataTable, formatTime, type Html, html, join } from "../html.ts";
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

/** Requests, error rate and latency of one service over the window, in `SERIES_BUCKETS` buckets. */
function serviceCharts(s: ServiceSeries["services"][number], series: ServiceSeries, index: number): Html {
  const from = Date.parse(series.from);
  const to = Date.parse(series.to);
  const bucketMs = series.bucketSeconds * 1000;
  const values = (value: (p: ServicePoint) => number) =>
    bucketValues(s.points, from, bucketMs, SERIES_BUCKETS, value);
  const total = s.points.reduce((n, p) => n + p.requests, 0);
  const errors = s.points.reduce((n, p) => n + p.errors, 0);
  const busiest = s.points.reduce<ServicePoint | undefined>(
    (b, p) => (!b || p.requests > b.requests ? p : b),
    undefined,
  );
  const slowest = s.points.reduce<ServicePoint | undefined>(
    (b, p) => (!b || p.latencyMs.p99 > b.latencyMs.p99 ? p : b),
    undefined,
  );
  const per = formatDuration(bucketMs);
  const at = (p: ServicePoint | undefined) => (p ? formatTime(p.start) : "");
  const table = html`<div class="table-scroll" tabindex="0"><table>
  <caption class="visually-hidden">${s.service}, per ${per}</caption>
  <thead><tr><th scope="col">From</th><th scope="col">Requests</th><th scope="col">Errors</th><th scope="col">p50</th><th scope="col">p95</th><th scope="col">p99</th></tr></thead>
  <tbody>${join(
    s.points.map(
      (p) =>
        html`<tr><td>${formatTime(p.start)}</td><td class="num">${p.requests}</td><td class="num">${p.errors} (${formatPercent(p.errorRate)})</td><td class="num">${formatDuration(p.latencyMs.p50)}</td><td class="num">${formatDuration(p.latencyMs.p95)}</td><td class="num">${formatDuration(p.latencyMs.p99)}</td></tr>`,
    ),
  )}</tbody>
</table></div>`;
  const empty = s.points.length === 0;
  return html`<section class="card service-charts" aria-labelledby="charts-${index}">
  <h3 id="charts-${index}">${s.service}</h3>
  ${
    empty
      ? html`<p class="muted">No requests in this window.</p>`
      : html`<div class="chart-grid">
  ${timeChart({
    id: `requests-${index}`,
    title: `Requests per ${per}`,
    description: `${plural(total, "request", "requests")} of ${s.service}; the busiest ${per} began ${at(busiest)} with ${busiest?.requests ?? 0}.`,
    from,
    to,
    kind: "bars",
    series: [
      { label: "Requests", className: "s-requests", values: values((p) => p.requests - p.errors) },
      { label: "Errors", className: "s-errors", values: values((p) => p.errors) },
    ],
    format: (v) => (v >= 10 ? String(Math.round(v)) : String(Number(v.toFixed(1)))),
    table,
  })}
  ${timeChart({
    id: `errors-${index}`,
    title: "Error rate",
    description: `${plural(errors, "error", "errors")} in ${plural(total, "request", "requests")} (${formatPercent(total > 0 ? errors / total : null)}) over the window.`,
    from,
    to,
    kind: "lines",
    series: [{ label: "Error rate", className: "s-errors", values: values((p) => p.errorRate) }],
    format: (v) => `${Number((v * 100).toFixed(v < 0.1 ? 1 : 0))} %`,
  })}
  ${timeChart({
    id: `latency-${index}`,
    title: "Latency p50 / p95 / p99",
    description: `Latency of ${s.service}'s requests per ${per}; the highest p99, ${slowest ? formatDuration(slowest.latencyMs.p99) : "none"}, in the ${per} from ${at(slowest)}.`,
    from,
    to,
    kind: "lines",
    series: [
      { label: "p50", className: "s-p50", values: values((p) => p.latencyMs.p50) },
      { label: "p95", className: "s-p95", values: values((p) => p.latencyMs.p95) },
      { label: "p99", className: "s-p99", values: values((p) => p.latencyMs.p99) },
    ],
    format: formatDuration,
  })}
</div>`
  }
</section>`;
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
    read: async (input) => {
      const ctx = c.get("ctx");
      const environmentId = c.get("environment").current.id;
      const page = await getServiceHealth({ ctx, input: { ...input, environmentId } });
      // The charts of the services on this page, in one query.
      const series = await getServiceSeries({
        ctx,
        input: { environmentId, window: page.window, services: page.items.map((s) => s.service) },
      });
      return { ...page, series };
    },
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
${pager(environmentPath(c, "services"), values, page.nextCursor)}
<h2 id="charts">Over the window</h2>
${join(page.series.services.map((s, i) => serviceCharts(s, page.series, i)))}`,
    }),
  });

export function registerServicePages(web: Hono<WebEnv>): void {
  web.get("/orgs/:orgId/environments/:environmentId/services", servicesPage);
}
