import type { Context, Hono } from "hono";

import { AppError, isAppError } from "../../../errors.ts";
import { getProblem } from "../../../features/telemetry/problems/get-problem.ts";
import { listProblems } from "../../../features/telemetry/problems/list-problems.ts";
import {
  getOccurrenceSeries,
  type OccurrenceSeries,
} from "../../../features/telemetry/problems/occurrence-series.ts";
import {
  type Problem,
  ProblemListQuerySchema,
  ProblemParams,
  type ProblemSummary,
  UpdateProblemBody,
} from "../../../features/telemetry/problems/schemas.ts";
import { setProblemStatus } from "../../../features/telemetry/problems/set-problem-status.ts";
import { type ProblemStatus, problemStatuses } from "../../../platform/db/schema/problems.ts";
import { bucketValues, timeChart } from "../charts.ts";
import type { WebEnv } from "../env.ts";
import {
  errorSummary,
  type FormState,
  formString,
  inputField,
  notice,
  parseWith,
  postForm,
  readForm,
  refusalMessage,
  selectField,
} from "../forms.ts";
import { dataTable, formatTime, type Html, html, join, nothing, tableScroll, when } from "../html.ts";
import { renderPage } from "../layout.ts";
import { environmentPath, filteredPage, formatDuration, mayManage, pager, plural } from "./telemetry-view.ts";

const statusLabels: Record<ProblemStatus, string> = {
  open: "Open",
  regressed: "Regressed",
  resolved: "Resolved",
  ignored: "Ignored",
};

export const problemStatusBadge = (status: ProblemStatus): Html =>
  html`<span class="badge problem-${status}">${statusLabels[status]}</span>`;

/** The latest remediation's state, or a dash while there is none. */
export const remediationStateText = (state: string | null): Html =>
  state
    ? html`<span class="badge disabled">${state.replace(/[-_]/g, " ")}</span>`
    : html`<span class="muted">—</span>`;

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

const changeLabels = { open: "Reopen", resolved: "Resolve", ignored: "Ignore" } as const;

/** The status changes a person may make: to any other (`regressed` is patchbay's to set, and counts as open). */
const changesFrom = (status: Problem["status"]) =>
  (["open", "resolved", "ignored"] as const).filter((s) => s !== (status === "regressed" ? "open" : status));

const done: Record<string, string> = {
  open: "The problem is open again.",
  resolved: "The problem is resolved. If it occurs again it becomes regressed.",
  ignored: "The problem is ignored. It keeps counting occurrences but stays ignored.",
};

const problemPath = (c: Context<WebEnv>, problemId: string) => environmentPath(c, `problems/${problemId}`);

function statusForm(c: Context<WebEnv>, problem: Problem): Html {
  return postForm(c, {
    action: `${problemPath(c, problem.id)}/status`,
    label: "Change the status",
    body: html`<input type="hidden" name="revision" value="${problem.revision}">
  <div class="actions">${join(
    changesFrom(problem.status).map(
      (status) =>
        html`<button type="submit" name="status" value="${status}" class="secondary">${changeLabels[status]}</button>`,
    ),
  )}</div>`,
  });
}

/** Starting a run is handled by the remediation pages (POST …/problems/:problemId/remediations). */
function remediationForm(c: Context<WebEnv>, problem: Problem): Html {
  return html`<h2>Remediation</h2>
<div class="card">
  <p>Latest run: ${remediationStateText(problem.remediationState)}</p>
  <p class="hint">patchbay's agent investigates the problem (its stack trace, traces and logs) in the service's
  repository, runs the repository's tests and proposes a fix for review. It never merges.</p>
  ${postForm(c, {
    action: `${problemPath(c, problem.id)}/remediations`,
    label: "Start a remediation",
    busy: "Starting a remediation…",
    body: html`<div class="actions"><button type="submit">Start a remediation</button></div>`,
  })}
</div>`;
}

/** Occurrences per bucket from the first occurrence to now, first and last seen marked. */
function occurrenceChart(o: OccurrenceSeries): Html {
  const from = Date.parse(o.from);
  const to = Date.parse(o.to);
  const bucketMs = o.bucketSeconds * 1000;
  const buckets = Math.ceil((to - from) / bucketMs);
  const total = o.buckets.reduce((n, b) => n + b.count, 0);
  const peak = o.buckets.reduce<(typeof o.buckets)[number] | undefined>(
    (p, b) => (!p || b.count > p.count ? b : p),
    undefined,
  );
  return timeChart({
    id: "occurrences",
    title: `Occurrences per ${formatDuration(bucketMs)}`,
    description: `${plural(total, "occurrence", "occurrences")} recorded from failing spans between ${formatTime(o.from)} and ${formatTime(o.to)}; first seen ${formatTime(o.firstSeen)}, last seen ${formatTime(o.lastSeen)}${peak ? `; most (${peak.count}) in the ${formatDuration(bucketMs)} from ${formatTime(peak.start)}` : ""}.`,
    from,
    to,
    kind: "bars",
    series: [
      {
        label: "Occurrences",
        className: "s-occurrences",
        values: bucketValues(o.buckets, from, bucketMs, buckets, (b) => b.count),
      },
    ],
    format: (v) => (v >= 10 ? String(Math.round(v)) : String(Number(v.toFixed(1)))),
    markers: [
      { at: Date.parse(o.firstSeen), label: "first seen", className: "m-first" },
      { at: Date.parse(o.lastSeen), label: "last seen", className: "m-last" },
    ],
    table: dataTable({
      caption: "Occurrences per period",
      headers: ["From", "Occurrences"],
      rows: o.buckets.map(
        (b) => html`<tr><td>${formatTime(b.start)}</td><td class="num">${b.count}</td></tr>`,
      ),
      empty: html`<p class="muted">No occurrence was recorded from a span in this period.</p>`,
    }),
  });
}

async function problemPage(c: Context<WebEnv>, state: FormState = {}): Promise<Response> {
  const { problemId } = parseWith(ProblemParams, { problemId: c.req.param("problemId") });
  const environmentId = c.get("environment").current.id;
  const problem = await getProblem({ ctx: c.get("ctx"), input: { environmentId, problemId } });
  const occurrences = await getOccurrenceSeries({ ctx: c.get("ctx"), input: { environmentId, problemId } });
  const manage = mayManage(c);
  const frames = problem.frames;
  const body = html`${notice(state.flash)}${errorSummary(state.error)}
<h1>${problem.title}</h1>
<p class="lead"><code>${problem.culprit}</code></p>
<div class="card">
<dl class="facts">
  <dt>Status</dt><dd>${problemStatusBadge(problem.status)}${when(
    problem.statusChangedAt,
    () => html` <span class="muted">since ${formatTime(problem.statusChangedAt ?? "")}</span>`,
  )}</dd>
  <dt>Service</dt><dd><a href="${environmentPath(c, "services")}">${problem.service}</a></dd>
  <dt>Exception</dt><dd><code>${problem.exceptionType}</code></dd>
  <dt>Occurrences</dt><dd>${problem.count}</dd>
  <dt>Error logs</dt><dd>${problem.logCount} <span class="muted">on its failing spans</span></dd>
  <dt>First seen</dt><dd>${formatTime(problem.firstSeen)}</dd>
  <dt>Last seen</dt><dd>${formatTime(problem.lastSeen)}</dd>
  <dt>Remediation</dt><dd>${remediationStateText(problem.remediationState)}</dd>
</dl>
${manage ? statusForm(c, problem) : html`<p class="muted">Only an owner or administrator can change the status.</p>`}
</div>
<h2>Occurrences over time</h2>
<div class="card">${occurrenceChart(occurrences)}</div>
${when(problem.sampleMessage, () => html`<h2>Latest message</h2><pre class="log-body">${problem.sampleMessage}</pre>`)}
${when(problem.sampleLogMessage, () => html`<h2>Latest error log</h2><pre class="log-body">${problem.sampleLogMessage}</pre>`)}
<h2>Stack trace</h2>
${
  problem.stackTrace
    ? html`${when(frames.length > 0, () =>
        tableScroll(html`<table class="frames">
  <caption class="visually-hidden">Frames, most recent call first</caption>
  <thead><tr><th scope="col">Function</th><th scope="col">File</th><th scope="col"><span class="visually-hidden">In app</span></th></tr></thead>
  <tbody>${join(
    frames.map(
      (f) =>
        html`<tr${f.inApp ? nothing : html` class="muted"`}><td><code>${f.function || "(anonymous)"}</code></td><td><code>${f.file}</code></td><td>${f.inApp ? html`<span class="badge approval_missing">in app</span>` : nothing}</td></tr>`,
    ),
  )}</tbody>
</table>`),
      )}
<details${frames.length === 0 ? html` open` : nothing}><summary>Raw stack trace</summary><pre>${problem.stackTrace}</pre></details>`
    : html`<p class="muted">No stack trace was recorded.</p>`
}
<h2>Sample traces</h2>
${
  problem.sampleTraceIds.length === 0
    ? html`<p class="muted">No occurrence carried a trace id.</p>`
    : html`<ul class="traces">${join(
        problem.sampleTraceIds.map(
          (id) => html`<li><a href="${environmentPath(c, `traces/${id}`)}"><code>${id}</code></a></li>`,
        ),
      )}</ul><p class="hint">Newest first; traces are kept for the retention period.</p>`
}
${when(manage, () => remediationForm(c, problem))}`;
  return renderPage(c, {
    title: problem.title,
    heading: false,
    section: "problems",
    status: state.status ?? 200,
    body,
  });
}

export function registerProblemPages(web: Hono<WebEnv>): void {
  web.get("/orgs/:orgId/environments/:environmentId/problems", problemsPage);
  const base = "/orgs/:orgId/environments/:environmentId/problems/:problemId";

  web.get(base, (c) => problemPage(c, { flash: done[c.req.query("done") ?? ""] }));

  web.post(`${base}/status`, async (c) => {
    const form = await readForm(c);
    const { problemId } = parseWith(ProblemParams, { problemId: c.req.param("problemId") });
    try {
      const revision = Number(formString(form, "revision"));
      if (!Number.isInteger(revision) || revision < 1) {
        throw new AppError("invalid_request", "The form lost its revision; reload the page.");
      }
      const { status } = parseWith(UpdateProblemBody, { status: formString(form, "status") });
      await setProblemStatus({
        ctx: c.get("ctx"),
        input: { environmentId: c.get("environment").current.id, problemId, revision, status },
      });
      return c.redirect(`${problemPath(c, problemId)}?done=${status}`, 303);
    } catch (error) {
      if (!isAppError(error)) throw error;
      if (error.code === "revision_conflict") {
        return problemPage(c, {
          status: 412,
          error:
            "This problem changed since you loaded this page (a status change, or it occurred again after being resolved). Its current state is shown below; choose again.",
        });
      }
      if (error.code !== "invalid_request") throw error;
      return problemPage(c, { status: 400, error: refusalMessage(error) ?? error.message });
    }
  });
}
