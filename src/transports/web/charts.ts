import { type Html, html, join, nothing, when } from "./html.ts";

/**
 * Server-rendered SVG charts: no script, no library, and the strict CSP holds (SVG geometry is
 * attributes, colours are classes in app.css). Each chart is an image with a <title> and <desc>
 * for screen readers, and the figures it draws are also a table under it.
 */

/** A series over the chart's buckets: one value (or null: nothing in that bucket) per bucket. */
export type ChartSeries = { label: string; className: string; values: readonly (number | null)[] };

export type TimeChart = {
  /** Unique on the page: the ids of <title> and <desc> derive from it. */
  id: string;
  title: string;
  /** What the chart shows, in words (its <desc>): totals, peaks, the markers. */
  description: string;
  from: number;
  to: number;
  /** Bars (counts) or lines (rates, latencies). */
  kind: "bars" | "lines";
  series: readonly ChartSeries[];
  format: (value: number) => string;
  /** Vertical marks, e.g. first and last seen. */
  markers?: readonly { at: number; label: string; className: string }[];
  /** The figures as a table (the text alternative), shown on demand; charts of the same figures share one. */
  table?: Html;
};

const W = 480;
const H = 150;
const PAD = { left: 52, right: 10, top: 12, bottom: 22 };
const plotW = W - PAD.left - PAD.right;
const plotH = H - PAD.top - PAD.bottom;

const f1 = (n: number) => n.toFixed(1);

/** Times on the axis: UTC, to the minute (or the day for a week). */
function axisTime(ms: number, span: number): string {
  const iso = new Date(ms).toISOString();
  return span > 2 * 86_400_000 ? `${iso.slice(5, 10)} ${iso.slice(11, 16)}` : iso.slice(11, 16);
}

export function timeChart(o: TimeChart): Html {
  const buckets = Math.max(1, ...o.series.map((s) => s.values.length));
  const max = Math.max(0, ...o.series.flatMap((s) => s.values.filter((v): v is number => v !== null)));
  const top = max > 0 ? max * 1.1 : 1;
  const y = (v: number) => PAD.top + plotH - (v / top) * plotH;
  const bw = plotW / buckets;
  const span = Math.max(1, o.to - o.from);
  const x = (ms: number) => PAD.left + ((ms - o.from) / span) * plotW;
  const grid = [0, top / 2, top].map(
    (
      v,
    ) => html`<line class="grid" x1="${PAD.left}" x2="${W - PAD.right}" y1="${f1(y(v))}" y2="${f1(y(v))}"></line>
<text class="tick" x="${PAD.left - 4}" y="${f1(y(v) + 3)}" text-anchor="end">${o.format(v)}</text>`,
  );
  const ticks = [o.from, o.from + span / 2, o.to].map(
    (t, i) =>
      html`<text class="tick" x="${f1(x(t))}" y="${H - 6}" text-anchor="${i === 0 ? "start" : i === 2 ? "end" : "middle"}">${axisTime(t, span)}</text>`,
  );
  const marks = (series: ChartSeries, index: number): Html => {
    if (o.kind === "bars") {
      // Several bar series share a bucket side by side.
      const width = Math.max(1, (bw - 2) / o.series.length);
      return join(
        series.values.map((v, i) =>
          v === null || v === 0
            ? nothing
            : html`<rect class="${series.className}" x="${f1(PAD.left + i * bw + 1 + index * width)}" y="${f1(y(v))}" width="${f1(width)}" height="${f1(PAD.top + plotH - y(v))}"></rect>`,
        ),
      );
    }
    // Lines break where a bucket has nothing; a lone point is a dot.
    const runs: string[][] = [[]];
    series.values.forEach((v, i) => {
      if (v === null) runs.push([]);
      else runs.at(-1)?.push(`${f1(PAD.left + (i + 0.5) * bw)},${f1(y(v))}`);
    });
    return join(
      runs
        .filter((r) => r.length > 0)
        .map((r) =>
          r.length === 1
            ? html`<circle class="${series.className}" cx="${r[0]?.split(",")[0]}" cy="${r[0]?.split(",")[1]}" r="2.5"></circle>`
            : html`<polyline class="${series.className}" points="${r.join(" ")}"></polyline>`,
        ),
    );
  };
  const markers = join(
    (o.markers ?? []).map(
      (
        m,
      ) => html`<line class="marker ${m.className}" x1="${f1(x(m.at))}" x2="${f1(x(m.at))}" y1="${PAD.top}" y2="${PAD.top + plotH}"></line>
<text class="marker-label ${m.className}" x="${f1(Math.min(Math.max(x(m.at), PAD.left + 30), W - PAD.right - 30))}" y="${PAD.top - 2}" text-anchor="middle">${m.label}</text>`,
    ),
  );
  return html`<figure class="chart" id="${o.id}">
  <figcaption>${o.title}</figcaption>
  <div class="chart-box">
  <svg viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="${o.id}-title ${o.id}-desc" focusable="false">
    <title id="${o.id}-title">${o.title}</title>
    <desc id="${o.id}-desc">${o.description}</desc>
    ${join(grid)}${join(ticks)}
    <g class="${o.kind}">${join(o.series.map((s, i) => marks(s, i)))}</g>
    ${markers}
  </svg>
  </div>
  ${when(
    o.series.length > 1 || (o.markers ?? []).length > 0,
    () =>
      html`<ul class="legend">${join(o.series.map((s) => html`<li><span class="swatch ${s.className}"></span>${s.label}</li>`))}${join(
        (o.markers ?? []).map((m) => html`<li><span class="swatch ${m.className}"></span>${m.label}</li>`),
      )}</ul>`,
  )}
  ${when(o.table, () => html`<details class="chart-data"><summary>Figures as a table<span class="visually-hidden">: ${o.title}</span></summary>${o.table}</details>`)}
</figure>`;
}

/** Values by bucket index from points with a start time; buckets without a point are null. */
export function bucketValues<P extends { start: string }>(
  points: readonly P[],
  from: number,
  bucketMs: number,
  buckets: number,
  value: (p: P) => number,
): (number | null)[] {
  const out: (number | null)[] = Array.from({ length: buckets }, () => null);
  for (const p of points) {
    const i = Math.floor((Date.parse(p.start) - from) / bucketMs + 1e-6);
    if (i >= 0 && i < buckets) out[i] = value(p);
  }
  return out;
}
