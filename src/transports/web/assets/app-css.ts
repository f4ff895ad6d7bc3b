/** A trace's spans are indented by depth, a rem a level, up to MAX_INDENT (trace.ts). */
const spanIndents = Array.from(
  { length: 12 },
  (_, i) => `.span-name.d${i + 1} { padding-left: ${i + 1}rem; }`,
).join("\n");

/** The UI's one stylesheet: system fonts, no images, readable at any width. */
export const appCss = `
:root {
  --fg: #1b1f24; --muted: #5b6470; --line: #d8dde3; --bg: #f6f7f9; --card: #fff;
  --accent: #2454c5; --accent-fg: #fff; --danger: #b42318; --ok: #1a7f37; --warn: #9a6700;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); line-height: 1.45; }
a { color: var(--accent); }
.skip { position: absolute; left: -999px; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%);
  white-space: nowrap; }
.skip:focus { left: 1rem; top: 1rem; background: #fff; padding: .5rem; z-index: 10; }
header.top { display: flex; flex-wrap: wrap; align-items: center; gap: 1rem; padding: .6rem 1.5rem;
  background: #111827; color: #e5e7eb; }
header.top a { color: #e5e7eb; }
.brand { font-weight: 700; font-size: 1.1rem; text-decoration: none; letter-spacing: .02em; }
header nav ul { display: flex; flex-wrap: wrap; gap: .25rem 1rem; list-style: none; margin: 0; padding: 0; }
header nav a { text-decoration: none; padding: .25rem 0; }
header nav a[aria-current="page"] { border-bottom: 2px solid #93c5fd; }
.account { margin-left: auto; display: flex; align-items: center; gap: .75rem; font-size: .9rem; }
.account form { display: inline; }
button.link { background: none; border: 0; color: #93c5fd; padding: 0; font: inherit; cursor: pointer;
  text-decoration: underline; }
.switcher { position: relative; font-size: .9rem; }
.switcher summary { cursor: pointer; padding: .25rem .6rem; border: 1px solid #374151; border-radius: 6px; }
.switcher-label { color: #9ca3af; }
.switcher ul { position: absolute; z-index: 5; margin: .25rem 0 0; padding: .25rem 0; list-style: none;
  background: #fff; border: 1px solid var(--line); border-radius: 6px; min-width: 14rem;
  box-shadow: 0 6px 20px rgba(0,0,0,.15); }
.switcher li a { display: block; padding: .35rem .8rem; color: var(--fg); text-decoration: none; }
.switcher li a:hover, .switcher li a:focus { background: var(--bg); }
.switcher li a[aria-current="true"] { font-weight: 600; }
main { max-width: 64rem; margin: 0 auto; padding: 1.5rem; overflow-wrap: anywhere; }
.table-scroll { position: relative; overflow-x: auto; margin-bottom: 1rem; border-radius: 8px; }
.table-scroll > table { margin: 0; }
main.narrow, .narrow { max-width: 28rem; }
h1 { font-size: 1.6rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 .75rem; }
.lead { color: var(--muted); margin-top: -.5rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 1.25rem;
  margin-bottom: 1.25rem; }
.field { margin: 0 0 1rem; border: 0; padding: 0; }
.field label, legend { display: block; font-weight: 600; margin-bottom: .3rem; }
input[type=text], input[type=email], input[type=password], input[type=url], select {
  width: 100%; max-width: 32rem; padding: .5rem .6rem; border: 1px solid #b8c0ca; border-radius: 6px;
  font: inherit; background: #fff; }
input:focus, select:focus, button:focus, summary:focus, a:focus { outline: 3px solid #93c5fd; outline-offset: 1px; }
.has-error input, .has-error select { border-color: var(--danger); }
.hint { color: var(--muted); font-size: .875rem; margin: .25rem 0 0; font-weight: 400; }
.field-error { color: var(--danger); font-size: .9rem; margin: .3rem 0 0; font-weight: 600; }
.check { display: flex; gap: .5rem; align-items: flex-start; margin: .35rem 0; }
.check label { font-weight: 400; margin: 0; }
button, .button { display: inline-block; background: var(--accent); color: var(--accent-fg); border: 0;
  border-radius: 6px; padding: .5rem 1rem; font: inherit; font-weight: 600; cursor: pointer;
  text-decoration: none; }
button.secondary, .button.secondary { background: #e5e9f0; color: var(--fg); }
button.danger, .button.danger { background: var(--danger); color: #fff; }
button[disabled] { opacity: .6; cursor: progress; }
.actions { display: flex; flex-wrap: wrap; gap: .75rem; align-items: center; margin-top: 1rem; }
.actions form { display: inline; }
.alert { border-radius: 8px; padding: .75rem 1rem; margin: 0 0 1rem; border: 1px solid; }
.alert p { margin: 0; }
.alert ul { margin: .5rem 0 0; }
.alert.error { background: #fef3f2; border-color: #fecdca; color: #7a271a; }
.alert.success { background: #ecfdf3; border-color: #abefc6; color: #05603a; }
.alert.info { background: #eff8ff; border-color: #b2ddff; color: #194185; }
.alert.warning { background: #fffaeb; border-color: #fedf89; color: #7a2e0e; }
table { width: 100%; border-collapse: collapse; background: var(--card); border: 1px solid var(--line);
  border-radius: 8px; overflow: hidden; }
th, td { text-align: left; padding: .6rem .75rem; border-bottom: 1px solid var(--line); vertical-align: top;
  overflow-wrap: break-word; }
table.tools { table-layout: fixed; min-width: 20rem; }
table.tools .col-approve { width: 5.5rem; }
table.tools .col-access { width: 10rem; }
table.tools td { overflow-wrap: anywhere; padding: .35rem .6rem; line-height: 1.35; }
table.tools details.tool-more summary { display: flex; gap: .3rem; font-size: .875rem; color: var(--muted); }
table.tools details.tool-more summary::before { content: "▸"; }
table.tools details.tool-more[open] summary::before { content: "▾"; }
table.tools details.tool-more summary::-webkit-details-marker { display: none; }
table.tools .tool-desc { margin: 0; max-height: none; min-width: 0; white-space: nowrap; overflow: hidden;
  text-overflow: ellipsis; }
table.tools .hints { display: inline-flex; flex-wrap: wrap; gap: .25rem; margin-left: .4rem; vertical-align: middle; }
table.tools details.tool-more pre { max-height: 14rem; }
.tool-desc-full { white-space: pre-wrap; }
table.tools .attest { display: flex; gap: .35rem; font-size: .8rem; line-height: 1.2; margin: .25rem 0 0; }
.badge.hint { background: #eef1f5; color: #374151; font-weight: 500; }
.badge.hint-ok { background: #dcfce7; color: #14532d; font-weight: 500; }
.badge.hint-bad { background: #fee2e2; color: #7f1d1d; font-weight: 500; }
@media (max-width: 40rem) {
  table.tools .col-approve { width: 4.2rem; }
  table.tools .col-access { width: 6.5rem; }
}
th { background: #eef1f5; font-size: .85rem; text-transform: uppercase; letter-spacing: .03em; color: var(--muted); }
tr:last-child td { border-bottom: 0; }
td form { display: inline; }
.badge { display: inline-block; padding: .1rem .55rem; border-radius: 999px; font-size: .8rem; font-weight: 600;
  white-space: nowrap; border: 1px solid transparent; }
.badge.ready { background: #dcfce7; color: #14532d; }
.badge.disabled { background: #e5e7eb; color: #374151; }
.badge.credential_missing, .badge.approval_stale { background: #fef3c7; color: #78350f; }
.badge.approval_missing { background: #dbeafe; color: #1e3a8a; }
.badge.no { background: #fee2e2; color: #7f1d1d; }
.badge.ok { background: #dcfce7; color: #14532d; }
.badge.warn { background: #fef3c7; color: #78350f; }
.meters { display: flex; gap: 1rem; flex-wrap: wrap; margin: 0 0 1.25rem; }
.meter { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .6rem 1rem; }
.meter strong { font-size: 1.25rem; }
.meter.full strong { color: var(--danger); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1.25rem; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
code, pre, .secret { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .875rem; }
pre { background: #f3f4f6; padding: .75rem; border-radius: 6px; overflow: auto; max-height: 20rem; }
.secret { display: block; background: #111827; color: #f9fafb; padding: .75rem 1rem; border-radius: 6px;
  word-break: break-all; user-select: all; }
.tool-desc { color: var(--muted); font-size: .9rem; margin: .2rem 0; max-height: 7.5em; overflow: auto; }
.muted { color: var(--muted); }
.progress { display: none; align-items: center; gap: .75rem; margin-top: .75rem; }
form.busy .progress { display: flex; }
progress { width: 12rem; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.bad { color: var(--danger); font-weight: 600; }
.nowrap { white-space: nowrap; }
tbody th { background: none; font-size: 1rem; text-transform: none; letter-spacing: normal; color: var(--fg); }
tbody th .muted { font-weight: 400; font-size: .9rem; }
form.filters { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 1rem 1.25rem;
  margin-bottom: 1.25rem; }
form.filters .actions { margin-top: 0; }
.filter-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(12.5rem, 1fr)); gap: 0 1rem; }
form.filters.inline { display: flex; flex-wrap: wrap; align-items: flex-end; gap: 1rem; }
form.filters.inline .field { margin: 0; flex: 0 1 20rem; }
.filter-grid .field { margin-bottom: .75rem; }
.pager { display: inline; }
pre.log-body { background: none; padding: 0; margin: 0; white-space: pre-wrap; overflow-wrap: anywhere;
  max-height: 12rem; }
table.logs td { font-size: .9rem; }
details > summary { cursor: pointer; }
td details pre, .span-detail pre { margin: .4rem 0; }
.badge.sev-warn { background: #fef3c7; color: #78350f; }
.badge.sev-error, .badge.sev-fatal { background: #fee2e2; color: #7f1d1d; }
.badge.sev-info { background: #dbeafe; color: #1e3a8a; }
.badge.sev-debug, .badge.sev-trace, .badge.sev-unspecified { background: #e5e7eb; color: #374151; }
.badge.problem-open, .badge.problem-regressed { background: #fee2e2; color: #7f1d1d; }
.badge.problem-resolved { background: #dcfce7; color: #14532d; }
.badge.problem-ignored { background: #e5e7eb; color: #374151; }
ol.spans { list-style: none; margin: 0; padding: 0; background: var(--card); border: 1px solid var(--line);
  border-radius: 0 0 8px 8px; }
ol.spans > li { border-bottom: 1px solid var(--line); }
ol.spans > li:last-child { border-bottom: 0; }
.span-row, .span-head { display: grid; grid-template-columns: minmax(12rem, 2.2fr) minmax(6rem, 1fr) 6rem 8rem
  minmax(8rem, 2fr); gap: .75rem; align-items: center; padding: .45rem .75rem; }
.span-head { background: #eef1f5; font-size: .85rem; text-transform: uppercase; letter-spacing: .03em;
  color: var(--muted); border: 1px solid var(--line); border-bottom: 0; border-radius: 8px 8px 0 0; }
summary.span-row { list-style: none; }
summary.span-row::-webkit-details-marker { display: none; }
summary.span-row .span-name::before { content: "▸ "; color: var(--muted); }
details[open] > summary.span-row .span-name::before { content: "▾ "; }
details[open] > summary.span-row { background: #f3f6fb; }
.span-name { overflow-wrap: anywhere; }
.span-service { color: var(--muted); overflow-wrap: anywhere; }
.span-detail { padding: .5rem 1rem 1rem 2rem; border-top: 1px dashed var(--line); }
.span-detail details { margin: .4rem 0; }
svg.timing { width: 100%; height: .8rem; display: block; }
svg.timing .track { fill: #eef1f5; }
svg.timing .bar { fill: var(--accent); }
svg.timing .bar.error { fill: var(--danger); }
.exception { border-left: 3px solid var(--danger); padding-left: .75rem; margin: .4rem 0; }
.exception p { margin: .2rem 0; }
ul.traces { padding-left: 1.25rem; }
${spanIndents}
/* Phones (from 360 px): the navigation wraps under the brand on a line of its own, tables
   scroll in their box (table-scroll) or turn into cards (table.stack), forms take the width. */
@media (max-width: 40rem) {
  header.top { gap: .5rem .75rem; padding: .5rem 1rem; }
  header nav { order: 5; flex-basis: 100%; }
  header nav ul { gap: .15rem .9rem; font-size: .95rem; }
  .account { margin-left: 0; flex-wrap: wrap; }
  .account .who { overflow-wrap: anywhere; }
  .switcher ul { min-width: 0; max-width: calc(100vw - 2rem); }
  main { padding: 1rem; }
  h1 { font-size: 1.35rem; }
  th, td { padding: .5rem .55rem; }
  .card { padding: 1rem; }
  dl.facts { grid-template-columns: 1fr; gap: 0 0; }
  dl.facts dd { margin-bottom: .5rem; }
  table.stack, table.stack tbody, table.stack tr, table.stack td, table.stack tbody th { display: block; width: 100%; }
  table.stack thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
  table.stack tr { border-bottom: 1px solid var(--line); padding: .4rem 0; }
  table.stack tr:last-child { border-bottom: 0; }
  table.stack td { border: 0; padding: .2rem .75rem; }
  table.stack td[data-label]::before { content: attr(data-label); display: block; font-size: .75rem;
    text-transform: uppercase; letter-spacing: .03em; color: var(--muted); }
}
/* The trace waterfall (trace.ts). */
figure.waterfall { margin: 0 0 1rem; }
.waterfall-box { overflow-x: auto; background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
.waterfall-box svg { display: block; width: 100%; min-width: 40rem; height: auto; }
.waterfall-box .grid { stroke: #e5e7eb; }
.waterfall-box .tick { fill: var(--muted); font-size: 11px; font-family: system-ui, sans-serif; }
.waterfall-box .stripe { fill: #f8f9fb; }
.waterfall-box .w-name { fill: var(--fg); font-size: 12px; font-family: system-ui, sans-serif; }
.waterfall-box .w-time { fill: var(--muted); font-size: 11px; font-family: ui-monospace, Menlo, Consolas, monospace; }
.waterfall-box .w-bar { fill: var(--accent); }
.waterfall-box .error .w-bar { fill: var(--danger); }
.waterfall-box .error .w-name { fill: var(--danger); font-weight: 600; }
.span-offset { font-size: .8rem; }
@media (max-width: 40rem) {
  .span-row, .span-head { grid-template-columns: minmax(0, 1fr) auto auto; gap: .5rem; }
  .span-row .span-service, .span-row svg.timing, .span-head span:nth-child(2), .span-head span:nth-child(5) { display: none; }
  .span-offset { display: block; }
}
/* Charts (charts.ts): SVG drawn on the server, coloured here. */
.chart-grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(16rem, 1fr)); gap: 1rem; }
figure.chart { margin: 0; min-width: 0; }
figure.chart figcaption { font-weight: 600; font-size: .9rem; margin-bottom: .25rem; }
.chart-box svg { display: block; width: 100%; height: auto; }
.chart-box .grid { stroke: #e5e7eb; stroke-width: 1; }
.chart-box .tick { fill: var(--muted); font-size: 11px; font-family: system-ui, sans-serif; }
.chart-box polyline { fill: none; stroke-width: 2; stroke-linejoin: round; }
.chart-box .s-requests { fill: #93b4ea; stroke: #2454c5; }
.chart-box rect.s-requests { stroke: none; }
.chart-box .s-errors { fill: var(--danger); stroke: var(--danger); }
.chart-box rect.s-errors { stroke: none; }
.chart-box polyline.s-errors, .chart-box polyline.s-p50, .chart-box polyline.s-p95, .chart-box polyline.s-p99 { fill: none; }
.chart-box .s-p50 { stroke: #2454c5; fill: #2454c5; }
.chart-box .s-p95 { stroke: #9a6700; fill: #9a6700; }
.chart-box .s-p99 { stroke: #b42318; fill: #b42318; stroke-dasharray: 4 2; }
.chart-box .s-occurrences { fill: #b42318; }
.chart-box .marker { stroke-width: 1.5; stroke-dasharray: 3 2; }
.chart-box .marker-label { font-size: 10px; font-family: system-ui, sans-serif; }
.chart-box .m-first { stroke: #1a7f37; fill: #1a7f37; }
.chart-box .m-last { stroke: #6d28d9; fill: #6d28d9; }
ul.legend { display: flex; flex-wrap: wrap; gap: .2rem 1rem; list-style: none; margin: .3rem 0 0; padding: 0;
  font-size: .8rem; color: var(--muted); }
.swatch { display: inline-block; width: .8rem; height: .8rem; border-radius: 2px; margin-right: .3rem;
  vertical-align: -1px; }
.swatch.s-requests { background: #93b4ea; }
.swatch.s-errors, .swatch.s-occurrences { background: var(--danger); }
.swatch.s-p50 { background: #2454c5; }
.swatch.s-p95 { background: #9a6700; }
.swatch.s-p99 { background: #b42318; }
.swatch.m-first { background: #1a7f37; }
.swatch.m-last { background: #6d28d9; }
details.chart-data { margin-top: .4rem; font-size: .85rem; }
.service-charts h3 { margin: 0 0 .75rem; font-size: 1.05rem; }
/* Remediation: run statuses, the progress timeline, diffs. */
.badge.working { background: #dbeafe; color: #1e3a8a; }
.badge.waiting { background: #fef3c7; color: #78350f; }
ol.operator-steps { padding-left: 1.2rem; }
ol.operator-steps > li { margin: .7rem 0; }
.status-line { font-size: 1.05rem; }
.card > h2:first-child { margin-top: 0; }
.summary { white-space: pre-wrap; }
button.link-button { background: none; border: 0; color: var(--accent); padding: 0; font: inherit;
  font-size: .875rem; cursor: pointer; text-decoration: underline; }
details.start summary { cursor: pointer; font-weight: 600; }
details.start form { margin-top: 1rem; }
ol.timeline { list-style: none; margin: 0; padding: 0 0 0 1rem; border-left: 2px solid var(--line); }
ol.timeline li { margin: 0 0 .75rem; position: relative; }
ol.timeline li::before { content: ""; position: absolute; left: -1.4rem; top: .45rem; width: .6rem; height: .6rem;
  border-radius: 50%; background: var(--accent); }
ol.timeline li.step::before { background: #9ca3af; }
ol.timeline li.failed::before { background: var(--danger); }
ol.timeline time { color: var(--muted); font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: .85rem; margin-right: .5rem; }
ol.timeline li.step strong { font-weight: 500; color: var(--muted); }
.event-message { overflow-wrap: anywhere; white-space: pre-wrap; }
.diff-file { margin: 0 0 1.25rem; }
.diff-file h3 { font-size: 1rem; margin: 0 0 .4rem; }
.diff-count { font-weight: 400; font-size: .85rem; margin-left: .5rem; }
.diff-count .add { color: var(--ok); }
.diff-count .del { color: var(--danger); }
pre.diff { background: #fff; border: 1px solid var(--line); max-height: none; padding: .5rem 0; }
pre.diff span { display: block; padding: 0 .75rem; white-space: pre; }
pre.diff .add { background: #e6ffec; }
pre.diff .del { background: #ffebe9; }
pre.diff .hunk { background: #ddf4ff; color: #0a3069; }
pre.diff .meta { color: var(--muted); }
`;
