import type { Context, Hono } from "hono";
import { getTrace } from "../../../features/telemetry/queries/get-trace.ts";
import {
  type Trace,
  TraceParamsSchema,
  type TraceSpan,
} from "../../../features/telemetry/queries/schemas.ts";
import type { WebEnv } from "../env.ts";
import { notice, parseWith } from "../forms.ts";
import { type Html, html, join, nothing, when } from "../html.ts";
import { renderPage } from "../layout.ts";
import { formatInstant } from "./logs.ts";
import { environmentPath, formatDuration, jsonText } from "./telemetry-view.ts";

/** Indentation steps the stylesheet has classes for; deeper spans say their depth instead. */
const MAX_INDENT = 12;

/** Microseconds of an ISO time with up to microsecond precision. */
const micros = (iso: string): number =>
  Date.parse(`${iso.slice(0, 23)}Z`) * 1000 + Number(iso.slice(23, 26) || 0);

/**
 * Where the span sits in the trace, as an SVG bar: SVG geometry attributes are not styles, so the
 * strict CSP (no inline style) still allows a proportional bar without script.
 */
function timingBar(trace: Trace, span: TraceSpan): Html {
  const total = Math.max(1, micros(trace.endTime) - micros(trace.startTime));
  const start = ((micros(span.startTime) - micros(trace.startTime)) / total) * 1000;
  const width = Math.max(2, ((micros(span.endTime) - micros(span.startTime)) / total) * 1000);
  const x = Math.min(Math.max(0, start), 998);
  return html`<svg class="timing" viewBox="0 0 1000 10" preserveAspectRatio="none" aria-hidden="true" focusable="false"><rect class="track" x="0" y="0" width="1000" height="10"></rect><rect class="${span.status.code === "error" ? "bar error" : "bar"}" x="${x.toFixed(1)}" y="0" width="${Math.min(width, 1000 - x).toFixed(1)}" height="10"></rect></svg>`;
}

/** A span name cut to what fits its indented column of the waterfall. */
function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(1, max - 1))}…`;
}

/**
 * The whole trace as one waterfall image: a row per span in tree order, its name indented by
 * depth, its bar placed by start offset and as wide as its duration, labelled with both; a time
 * axis on top. An image to screen readers (title and description); the span list under it says
 * the same in text and opens each span's details.
 */
function waterfall(trace: Trace): Html {
  const W = 960;
  const nameW = 300;
  const barX = nameW + 10;
  const barW = W - barX - 20;
  const rowH = 22;
  const axisH = 26;
  const H = axisH + trace.spans.length * rowH + 6;
  const t0 = micros(trace.startTime);
  const total = Math.max(1, micros(trace.endTime) - t0);
  const xAt = (us: number) => barX + (us / total) * barW;
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const x = xAt(f * total);
    return html`<line class="grid" x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="${axisH - 6}" y2="${H}"></line><text class="tick" x="${x.toFixed(1)}" y="${axisH - 10}" text-anchor="${f === 0 ? "start" : f === 1 ? "end" : "middle"}">${formatDuration((f * total) / 1000)}</text>`;
  });
  const rows = trace.spans.map((span, i) => {
    const y = axisH + i * rowH;
    const depth = Math.min(span.depth, MAX_INDENT);
    const offset = micros(span.startTime) - t0;
    const duration = micros(span.endTime) - micros(span.startTime);
    const x = Math.min(xAt(Math.max(0, offset)), barX + barW - 2);
    const width = Math.max(2, Math.min((duration / total) * barW, barX + barW - x));
    const label = `${formatDuration(offset / 1000)} · ${formatDuration(span.durationMs)}`;
    // The label goes right of the bar when it fits there, otherwise left of it.
    const right = x + width + 6 + label.length * 6.2 <= W;
    return html`<g class="${span.status.code === "error" ? "w-row error" : "w-row"}">
  ${when(i % 2 === 1, () => html`<rect class="stripe" x="0" y="${y}" width="${W}" height="${rowH}"></rect>`)}
  <text class="w-name" x="${6 + depth * 14}" y="${y + 15}">${clip(span.name, Math.floor((nameW - 6 - depth * 14) / 7))}</text>
  <rect class="w-bar" x="${x.toFixed(1)}" y="${y + 5}" width="${width.toFixed(1)}" height="${rowH - 10}" rx="2"></rect>
  <text class="w-time" x="${(right ? x + width + 6 : x - 6).toFixed(1)}" y="${y + 15}" text-anchor="${right ? "start" : "end"}">${label}</text>
</g>`;
  });
  const failed = trace.spans.filter((s) => s.status.code === "error").map((s) => s.name);
  const longest = trace.spans.reduce<TraceSpan | undefined>(
    (l, s) => (!l || s.durationMs > l.durationMs ? s : l),
    undefined,
  );
  return html`<figure class="waterfall">
  <div class="waterfall-box" tabindex="0">
  <svg viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="waterfall-title waterfall-desc" focusable="false">
    <title id="waterfall-title">Waterfall of trace ${trace.traceId}</title>
    <desc id="waterfall-desc">${trace.spans.length} spans over ${formatDuration(trace.durationMs)}${longest ? `; the longest is ${longest.name} (${formatDuration(longest.durationMs)})` : ""}${failed.length > 0 ? `; failed: ${failed.join(", ")}` : "; none failed"}. Each span is listed with its start and duration under the image.</desc>
    ${join(ticks)}
    ${join(rows)}
  </svg>
  </div>
  <figcaption class="muted">Each bar starts at the span's start and is as long as its duration; labels read start offset · duration. Failed spans are red.</figcaption>
</figure>`;
}

function exceptionEvent(attributes: Record<string, unknown>): Html {
  const text = (key: string) => {
    const value = attributes[key];
    return typeof value === "string" ? value : value === undefined ? "" : JSON.stringify(value);
  };
  return html`<div class="exception">
  <p><strong>${text("exception.type") || "Exception"}</strong>${when(text("exception.message"), () => html`: ${text("exception.message")}`)}</p>
  ${when(text("exception.stacktrace"), () => html`<pre>${text("exception.stacktrace")}</pre>`)}
</div>`;
}

function spanDetails(span: TraceSpan): Html {
  const attributes = (label: string, value: Record<string, unknown>) =>
    Object.keys(value).length === 0
      ? nothing
      : html`<details><summary>${label} (${Object.keys(value).length})</summary><pre>${jsonText(value)}</pre></details>`;
  return html`<div class="span-detail">
  <dl class="facts">
    <dt>Span id</dt><dd><code>${span.spanId}</code>${when(span.parentSpanId, () => html` (parent <code>${span.parentSpanId}</code>)`)}</dd>
    <dt>Kind</dt><dd>${span.kind}</dd>
    <dt>Start</dt><dd>${formatInstant(span.startTime)} UTC</dd>
    <dt>Status</dt><dd>${span.status.code}${when(span.status.message, () => html` — ${span.status.message}`)}</dd>
    ${when(span.scope, () => html`<dt>Scope</dt><dd>${span.scope}</dd>`)}
  </dl>
  ${attributes("Attributes", span.attributes)}
  ${attributes("Resource attributes", span.resourceAttributes)}
  ${join(
    span.events.map(
      (event) =>
        html`<details${event.name === "exception" ? html` open` : nothing}><summary>Event: ${event.name}${when(
          event.time,
          () => html` <span class="muted">at ${formatInstant(event.time ?? "")}</span>`,
        )}</summary>${event.name === "exception" ? exceptionEvent(event.attributes) : html`<pre>${jsonText(event.attributes)}</pre>`}</details>`,
    ),
  )}
  ${when(
    span.links.length > 0,
    () =>
      html`<details><summary>Links (${span.links.length})</summary><pre>${jsonText({ links: span.links })}</pre></details>`,
  )}
</div>`;
}

function spanItem(trace: Trace, span: TraceSpan): Html {
  const depth = Math.min(span.depth, MAX_INDENT);
  const failed = span.status.code === "error";
  const exceptions = span.events.filter((e) => e.name === "exception").length;
  return html`<li><details>
  <summary class="span-row">
    <span class="span-name d${depth}"><span class="visually-hidden">Level ${span.depth + 1}: </span>${when(span.depth > MAX_INDENT, () => html`<span class="muted">[${span.depth}] </span>`)}${span.name}</span>
    <span class="span-service">${span.service}</span>
    <span class="num">${formatDuration(span.durationMs)}<span class="muted span-offset"> at +${formatDuration((micros(span.startTime) - micros(trace.startTime)) / 1000)}</span></span>
    <span>${failed ? html`<span class="badge no">error</span>` : html`<span class="badge disabled">${span.status.code}</span>`}${when(
      exceptions > 0,
      () => html` <span class="badge no">exception</span>`,
    )}</span>
    ${timingBar(trace, span)}
  </summary>
  ${spanDetails(span)}
</details></li>`;
}

async function tracePage(c: Context<WebEnv>): Promise<Response> {
  const { traceId } = parseWith(TraceParamsSchema, { traceId: c.req.param("traceId") });
  const ctx = c.get("ctx");
  const environmentId = c.get("environment").current.id;
  const trace = await getTrace({ ctx, input: { environmentId, traceId } });
  // The trace's own time, with an hour's margin either side for records logged around it.
  const margin = 3_600_000;
  const logs = `${environmentPath(c, "logs")}?${new URLSearchParams({
    traceId,
    from: new Date(Date.parse(trace.startTime) - margin).toISOString(),
    to: new Date(Date.parse(trace.endTime) + margin).toISOString(),
  }).toString()}`;
  return renderPage(c, {
    title: `Trace ${traceId}`,
    heading: false,
    body: html`<h1>Trace <code>${traceId}</code></h1>
<dl class="facts card">
  <dt>Start</dt><dd>${formatInstant(trace.startTime)} UTC</dd>
  <dt>Duration</dt><dd>${formatDuration(trace.durationMs)}</dd>
  <dt>Spans</dt><dd>${trace.spanCount}</dd>
  <dt>Services</dt><dd>${trace.services.join(", ")}</dd>
  <dt>Logs</dt><dd><a href="${logs}">Log records of this trace</a></dd>
</dl>
${when(trace.truncated, () => notice(`Only the first ${trace.spanCount} spans are shown.`, "warning"))}
${waterfall(trace)}
<h2>Spans</h2>
<div class="span-head" aria-hidden="true"><span>Span</span><span>Service</span><span>Duration</span><span>Status</span><span>Timeline</span></div>
<ol class="spans" aria-label="Spans, each after its parent">${join(trace.spans.map((s) => spanItem(trace, s)))}</ol>`,
  });
}

export function registerTracePages(web: Hono<WebEnv>): void {
  web.get("/orgs/:orgId/environments/:environmentId/traces/:traceId", tracePage);
}
