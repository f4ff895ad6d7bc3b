import type { Context, Hono } from "hono";
import { isAppError } from "../../../errors.ts";
import { cancelRemediation } from "../../../features/remediations/decide-remediation.ts";
import { getRemediation } from "../../../features/remediations/get-remediation.ts";
import { describeRemediationProblems } from "../../../features/remediations/list-remediations.ts";
import type { Remediation } from "../../../features/remediations/schemas.ts";
import { getRepository } from "../../../features/repositories/read-repositories.ts";
import type { Repository } from "../../../features/repositories/schemas.ts";
import type { WebEnv } from "../env.ts";
import { notice, postForm } from "../forms.ts";
import { formatTime, type Html, html, join, nothing, when } from "../html.ts";
import { confirmPage, renderPage } from "../layout.ts";
import {
  endedStatuses,
  remediationsPath,
  repositoriesPath,
  runPath,
  startPath,
  statusBadge,
  statusExplanation,
  testResult,
  verificationView,
  watchView,
  workingStatuses,
} from "./remediation-view.ts";
import { repositoryLocation } from "./repositories.ts";

/** How often the page reloads itself: quickly while a worker is busy, slowly while waiting on people. */
function refreshFor(run: Remediation): number | undefined {
  if (workingStatuses.includes(run.status)) return 3;
  if (run.status === "awaiting-approval") return 10;
  // A local-git run in review learns on a read that its branch was merged or deleted.
  if (run.status === "awaiting-review") return 30;
  return undefined;
}

/** The run's repository, or undefined once its registration was removed. */
export async function runRepository(c: Context<WebEnv>, run: Remediation): Promise<Repository | undefined> {
  if (!run.repositoryId) return undefined;
  try {
    return await getRepository({
      ctx: c.get("ctx"),
      input: { environmentId: run.environmentId, repositoryId: run.repositoryId },
    });
  } catch (error) {
    if (isAppError(error) && error.code === "not_found") return undefined;
    throw error;
  }
}

/** Where a person reviews the fix: the local review page, or the GitHub pull request. */
const reviewHref = (run: Remediation, repo: Repository | undefined): string | undefined =>
  !run.prUrl ? undefined : repo?.provider === "github" ? run.prUrl : `${runPath(run.id)}/review`;

const eventLabels: Record<string, string> = {
  created: "Requested",
  status: "Status",
  agent_step: "Agent step",
  approval_requested: "Approval requested",
  approval_granted: "Approved",
  change_proposed: "Change proposed",
  tests_passed: "Tests passed",
  regressed: "Regressed after merge",
  fix_confirmed: "Closed as fixed",
  branch_pushed: "Branch written",
  review_opened: "Review opened",
  cancel_requested: "Cancellation requested",
  cancelled: "Cancelled",
  failed: "Failed",
  merged: "Merged",
  closed: "Closed",
};

function timeline(run: Remediation): Html {
  if (run.events.length === 0) return html`<p class="muted">No progress yet.</p>`;
  return html`<ol class="timeline">${join(
    run.events.map(
      (e) => html`<li class="event ${e.type === "agent_step" ? "step" : e.type}">
    <time datetime="${e.at}" title="${formatTime(e.at)}">${e.at.slice(11, 19)}</time>
    <strong>${eventLabels[e.type] ?? e.type}</strong>${when(e.status, () => html` → ${statusBadge(e.status ?? "queued")}`)}
    <div class="event-message">${e.message}</div>
  </li>`,
    ),
  )}</ol>`;
}

const cancellable = (run: Remediation) =>
  !endedStatuses.includes(run.status) &&
  run.status !== "awaiting-review" &&
  !run.events.some((e) => e.type === "cancel_requested");

const done: Record<string, string> = {
  approved: "Approved. The change is tested next and, if the tests pass, proposed for review.",
  cancelled: "Cancellation requested.",
  rejected: "Rejected: the run is cancelled and nothing is proposed.",
};

async function runPage(c: Context<WebEnv>): Promise<Response> {
  const ctx = c.get("ctx");
  const { current } = c.get("environment");
  const org = c.get("org");
  const remediationId = c.req.param("remediationId") ?? "";
  const run = await getRemediation({ ctx, input: { environmentId: current.id, remediationId } });
  const problems = await describeRemediationProblems({
    ctx,
    input: { environmentId: current.id, problemIds: run.problemId ? [run.problemId] : [] },
  });
  const problem = run.problemId ? problems.get(run.problemId) : undefined;
  const repo = await runRepository(c, run);
  const review = reviewHref(run, repo);
  const manage = org.role !== "member";
  const steps = run.events.filter((e) => e.type === "agent_step").length;
  return renderPage(c, {
    title:
      run.kind === "instrumentation"
        ? `Instrumenting ${run.service ?? "a service"}`
        : problem
          ? `Fixing: ${problem.title}`
          : `Remediation ${run.id}`,
    section: "remediations",
    refreshSeconds: refreshFor(run),
    lead: html`Remediation <code>${run.id}</code> in ${current.name}`,
    body: html`${notice(done[c.req.query("done") ?? ""])}
<div class="card run-status">
  <p class="status-line">${statusBadge(run.status)} ${statusExplanation(run)}</p>
  ${when(
    run.status === "awaiting-approval" && run.approval,
    () => html`<div class="alert warning"><p>${run.approval?.message}</p>
    <p><a class="button" href="${runPath(run.id)}/approval">${run.approval?.kind === "high_risk_change" ? "Review and approve" : "What to do"}</a></p></div>`,
  )}
  ${when(
    run.status === "failed",
    () =>
      html`<div class="alert error"><p><strong>${run.reasonCode ?? "failed"}</strong>: ${run.reason ?? "No reason was recorded."}</p></div>`,
  )}
  ${when(review, () => html`<p><a class="button" href="${review ?? ""}">${repo?.provider === "github" ? "Open the pull request" : "Review the fix"}</a>${when(run.prUrl && repo?.provider === "github", () => html` <a href="${runPath(run.id)}/review">Diff and test result here</a>`)}</p>`)}
  ${when(workingStatuses.includes(run.status), () => html`<p class="muted" role="status">This page refreshes itself every few seconds while the run works.</p>`)}
  <div class="actions">
    ${when(
      manage && cancellable(run),
      () => html`<a class="button danger" href="${runPath(run.id)}/cancel">Cancel run…</a>`,
    )}
    ${when(
      manage &&
        run.problemId &&
        endedStatuses.includes(run.status) &&
        (run.status !== "merged" || run.watch?.state === "regressed"),
      () =>
        postForm(c, {
          action: startPath(org.id, current.id, run.problemId ?? ""),
          label: "Start a new run",
          busy: "Starting…",
          body: html`<button type="submit" class="secondary">Start a new run for this problem</button>`,
        }),
    )}
    <a href="${remediationsPath(org.id, current.id)}">All remediations</a>
  </div>
</div>

<h2>Details</h2>
<div class="card"><dl class="facts">
  <dt>Problem</dt><dd>${problem ? problem.title : "(no longer stored)"} <code>${run.problemId}</code></dd>
  <dt>Service</dt><dd>${run.service ?? "—"}</dd>
  <dt>Repository</dt><dd>${
    repo
      ? repositoryLocation(repo)
      : run.repositoryId
        ? html`<span class="muted">registration removed</span>`
        : html`<span class="muted">none yet</span> · <a href="${repositoriesPath(org.id, current.id)}">Repositories</a>`
  }</dd>
  ${when(run.branch, () => html`<dt>Branch</dt><dd><code>${run.branch}</code></dd>`)}
  ${when(run.baseCommit, () => html`<dt>Base commit</dt><dd><code>${run.baseCommit}</code></dd>`)}
  ${when(run.headCommit, () => html`<dt>Commit</dt><dd><code>${run.headCommit}</code></dd>`)}
  <dt>Requested by</dt><dd><code>${run.requestedBy}</code></dd>
  <dt>Started</dt><dd>${formatTime(run.createdAt)}</dd>
  <dt>Updated</dt><dd>${formatTime(run.updatedAt)}</dd>
  ${when(run.finishedAt, () => html`<dt>Finished</dt><dd>${formatTime(run.finishedAt ?? run.updatedAt)}</dd>`)}
  <dt>Budgets</dt><dd>${steps} of ${run.budgets.maxSteps} agent steps · ${run.budgets.maxTokens.toLocaleString("en")} tokens · ${Math.round(run.budgets.maxDurationMs / 60_000)} minutes</dd>
</dl></div>

${when(
  run.change,
  () => html`<h2>The agent's summary</h2>
<div class="card">
  <p class="summary">${run.change?.summary}</p>
  <p>Files: ${join((run.change?.files ?? []).map((f) => html`<code>${f}</code> `))}</p>
  ${when(run.change?.risk.high, () => html`<p class="muted">High risk: ${(run.change?.risk.reasons ?? []).join("; ")}</p>`)}
</div>`,
)}
${when(run.validation, () => html`<h2>Tests</h2><div class="card">${testResult(run.validation)}</div>`)}
${verificationView(run.verification)}
${watchView(run.watch)}

<h2>Progress</h2>
${timeline(run)}
${run.events.length >= 200 ? html`<p class="muted">The latest 200 events are shown.</p>` : nothing}`,
  });
}

export function registerRemediationRunPages(web: Hono<WebEnv>): void {
  web.get("/remediations/:remediationId", runPage);
  // Cancelling throws away the run's work: a page asks first.
  web.get("/remediations/:remediationId/cancel", async (c) => {
    const { current } = c.get("environment");
    const remediationId = c.req.param("remediationId") ?? "";
    const run = await getRemediation({
      ctx: c.get("ctx"),
      input: { environmentId: current.id, remediationId },
    });
    if (!cancellable(run)) return c.redirect(runPath(run.id), 303);
    return confirmPage(c, {
      title: "Cancel this remediation?",
      section: "remediations",
      text: html`<p>Run <code>${run.id}</code> stops at its next step and proposes nothing; what it has done so far is
  discarded. You can start a new run on the problem later.</p>`,
      action: `${runPath(run.id)}/cancel`,
      label: "Confirm cancellation",
      button: html`<button type="submit" class="danger">Cancel the run</button>`,
      cancel: runPath(run.id),
    });
  });

  web.post("/remediations/:remediationId/cancel", async (c) => {
    const environmentId = c.get("environment").current.id;
    const remediationId = c.req.param("remediationId") ?? "";
    await cancelRemediation({ ctx: c.get("ctx"), input: { environmentId, remediationId } });
    return c.redirect(`${runPath(remediationId)}?done=cancelled`, 303);
  });
}
