import type { Context, Hono } from "hono";
import { type AppError, isAppError } from "../../../errors.ts";
import {
  describeRemediationProblems,
  listRemediations,
} from "../../../features/remediations/list-remediations.ts";
import { ProblemParams } from "../../../features/remediations/schemas.ts";
import { startRemediation } from "../../../features/remediations/start-remediation.ts";
import type { WebEnv } from "../env.ts";
import { formString, inputField, parseWith, postForm, readForm } from "../forms.ts";
import { formatTime, type Html, html, join, tableScroll, when } from "../html.ts";
import { renderPage } from "../layout.ts";
import {
  endedStatuses,
  remediationsPath,
  repositoriesPath,
  runPath,
  startPath,
  statusBadge,
} from "./remediation-view.ts";

const PAGE_SIZE = 50;

async function listPage(c: Context<WebEnv>): Promise<Response> {
  const { current } = c.get("environment");
  const org = c.get("org");
  const ctx = c.get("ctx");
  const cursor = c.req.query("cursor") || undefined;
  const page = await listRemediations({
    ctx,
    input: { environmentId: current.id, pageSize: PAGE_SIZE, cursor },
  });
  const problems = await describeRemediationProblems({
    ctx,
    input: {
      environmentId: current.id,
      problemIds: page.items.flatMap((r) => (r.problemId ? [r.problemId] : [])),
    },
  });
  const manage = org.role !== "member";
  const base = remediationsPath(org.id, current.id);
  const rows = page.items.map((r) => {
    const problem = r.problemId ? problems.get(r.problemId) : undefined;
    return html`<tr>
    <td>${statusBadge(r.status)}</td>
    <td>${
      r.kind === "instrumentation"
        ? html`OpenTelemetry instrumentation`
        : problem
          ? problem.title
          : html`<span class="muted">(problem no longer stored)</span>`
    }${when(r.problemId, () => html`<br><code class="muted">${r.problemId}</code>`)}${when(r.service, () => html` <span class="muted">· ${r.service}</span>`)}</td>
    <td>${formatTime(r.createdAt)}</td>
    <td>${formatTime(r.updatedAt)}</td>
    <td><a href="${runPath(r.id)}">${r.id}</a>${when(
      manage && r.problemId && endedStatuses.includes(r.status) && r.status !== "merged",
      () =>
        html`<br>${postForm(c, {
          action: startPath(org.id, current.id, r.problemId ?? ""),
          busy: "Starting…",
          label: `Start again for ${r.problemId}`,
          body: html`<button type="submit" class="link-button">Start again</button>`,
        })}`,
    )}</td>
  </tr>`;
  });
  return renderPage(c, {
    title: "Remediations",
    section: "remediations",
    lead: `Runs of patchbay's agent on problems of ${current.name}: it investigates, writes a fix in a sandbox, runs the tests and proposes the fix for review. It never merges.`,
    body: html`${when(manage, () => startForm(c, base))}
${
  page.items.length === 0 && !cursor
    ? html`<div class="card"><p>No remediation has run in this environment yet. Start one from a problem; the
  agent needs the repository of the problem's service (<a href="${repositoriesPath(org.id, current.id)}">Repositories</a>).</p></div>`
    : tableScroll(html`<table>
  <caption class="visually-hidden">Remediation runs in ${current.name}, oldest first</caption>
  <thead><tr><th scope="col">Status</th><th scope="col">Problem</th><th scope="col">Started</th><th scope="col">Updated</th><th scope="col">Run</th></tr></thead>
  <tbody>${join(rows)}</tbody>
</table>`)
}
${when(page.nextCursor, () => html`<p><a href="${base}?cursor=${page.nextCursor ?? ""}">Later runs →</a></p>`)}`,
  });
}

function startForm(c: Context<WebEnv>, base: string): Html {
  return html`<details class="card start"><summary>Start a remediation</summary>
${postForm(c, {
  action: `${base}/start`,
  busy: "Starting…",
  body: html`${inputField({ name: "problemId", label: "Problem id", placeholder: "prb_…", required: true, autocomplete: "off", hint: "The problem to fix (from the problem's page or GET …/problems). Owners and admins only." })}
  <div class="actions"><button type="submit">Start remediation</button></div>`,
})}
</details>`;
}

/** A refused start, told plainly with what to do next; the status is the refusal's. */
function refusedPage(c: Context<WebEnv>, error: AppError, problemId: string): Promise<Response> {
  const org = c.get("org");
  const { current } = c.get("environment");
  const running = typeof error.details?.remediationId === "string" ? error.details.remediationId : undefined;
  const next: Record<string, Html> = {
    model_not_configured: html`An operator of this patchbay server must configure the agent's model
      (<code>PATCHBAY_MODEL</code> and the provider's key) and restart it.`,
    sandbox_unavailable: html`An operator must install bubblewrap or set <code>PATCHBAY_SANDBOX</code> (docs/remediation.md).`,
    remediation_in_progress: html`<a href="${runPath(running ?? "")}">Open the run in progress</a>.`,
    not_found: html`Check the problem id; problems of other environments cannot be remediated here.`,
  };
  return renderPage(c, {
    title: "The remediation could not start",
    section: "remediations",
    status: error.status as 404,
    body: html`<div class="alert error" role="alert"><p>${error.message}</p></div>
<div class="card">
  ${when(next[error.code], () => html`<p>${next[error.code]}</p>`)}
  <p class="muted">Error <code>${error.code}</code> · problem <code>${problemId}</code> · request <code>${c.get("requestId")}</code></p>
  <p><a href="${remediationsPath(org.id, current.id)}">Back to remediations</a></p>
</div>`,
  });
}

/**
 * Starts a run with the same verb and permission as `POST /api/v1/environments/{id}/problems/
 * {problemId}/remediations`, then shows the run. A refusal (no model, a run already working on
 * the problem, an unknown problem) is a page saying so; a member's attempt is the 403 page.
 */
async function start(c: Context<WebEnv>, rawProblemId: string): Promise<Response> {
  const environmentId = c.get("environment").current.id;
  const problemId = parseWith(ProblemParams.pick({ problemId: true }), {
    problemId: rawProblemId.trim(),
  }).problemId;
  try {
    const { run } = await startRemediation({ ctx: c.get("ctx"), input: { environmentId, problemId } });
    return c.redirect(runPath(run.id), 303);
  } catch (error) {
    if (!isAppError(error) || error.code === "forbidden" || error.code === "internal") throw error;
    return refusedPage(c, error, problemId);
  }
}

export function registerRemediationListPages(web: Hono<WebEnv>): void {
  const env = "/orgs/:orgId/environments/:environmentId";
  web.get(`${env}/remediations`, listPage);
  web.post(`${env}/problems/:problemId/remediations`, (c) => start(c, c.req.param("problemId") ?? ""));
  web.post(`${env}/remediations/start`, async (c) => start(c, formString(await readForm(c), "problemId")));
}
