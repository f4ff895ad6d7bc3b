import type { Context, Hono } from "hono";
import { isAppError } from "../../../errors.ts";
import { approveRemediation, cancelRemediation } from "../../../features/remediations/decide-remediation.ts";
import {
  getRemediation,
  getRemediationReview,
  showProposedChange,
} from "../../../features/remediations/get-remediation.ts";
import type {
  ProposedChange,
  Remediation,
  RemediationReview,
} from "../../../features/remediations/schemas.ts";
import type { WebEnv } from "../env.ts";
import { postForm } from "../forms.ts";
import { type Html, html, join, when } from "../html.ts";
import { confirmPage, renderPage } from "../layout.ts";
import {
  renderDiff,
  repositoriesPath,
  runPath,
  statusBadge,
  statusExplanation,
  testResult,
  verificationView,
} from "./remediation-view.ts";
import { githubInstallLink } from "./repository-create.ts";

function mergeSection(review: RemediationReview): Html {
  const steps = html`<pre id="merge-steps">${review.mergeSteps.join("\n")}</pre>`;
  if (review.provider === "github") {
    return html`<p>This fix is a draft pull request on GitHub. Review it there, mark it ready and merge it on GitHub —
  patchbay never merges.</p>
${when(review.prUrl, () => html`<p><a class="button" href="${review.prUrl ?? ""}">Open the pull request</a></p>`)}
${steps}`;
  }
  return html`<p>patchbay never merges. The commit is on the branch <code>${review.branch}</code> of
  <code>${review.repository}</code>; to accept it, merge it yourself on the machine that holds the repository:</p>
${steps}
<p><button type="button" class="secondary" data-copy="merge-steps">Copy the commands</button></p>
<p class="muted">The run shows <em>merged</em> once the branch is merged into <code>${review.baseBranch}</code>,
  and <em>closed</em> if the branch is deleted without merging.</p>`;
}

async function reviewPage(c: Context<WebEnv>): Promise<Response> {
  const { current } = c.get("environment");
  const remediationId = c.req.param("remediationId") ?? "";
  let review: RemediationReview;
  try {
    review = await getRemediationReview({
      ctx: c.get("ctx"),
      input: { environmentId: current.id, remediationId },
    });
  } catch (error) {
    // The run is this organisation's (the context checked) but has no commit yet: say so.
    if (
      !isAppError(error) ||
      error.code !== "not_found" ||
      typeof error.details?.remediationStatus !== "string"
    )
      throw error;
    return renderPage(c, {
      title: "Nothing to review yet",
      section: "remediations",
      status: 404,
      body: html`<div class="card"><p>${error.message}</p>
  <p><a href="${runPath(remediationId)}">Back to the run</a></p></div>`,
    });
  }
  return renderPage(c, {
    title: "Review the proposed fix",
    section: "remediations",
    lead: html`Remediation <a href="${runPath(review.remediationId)}"><code>${review.remediationId}</code></a> · ${statusBadge(review.status)}`,
    body: html`<div class="card"><dl class="facts">
  <dt>Repository</dt><dd><code>${review.repository}</code> (${review.provider === "github" ? "GitHub" : "local git"})</dd>
  <dt>Branch</dt><dd><code>${review.branch}</code></dd>
  <dt>Base</dt><dd><code>${review.baseBranch}</code> at <code>${review.baseCommit}</code></dd>
  <dt>Commit</dt><dd><code>${review.headCommit}</code></dd>
  <dt>Files</dt><dd>${join(review.files.map((f) => html`<code>${f}</code> `))}</dd>
</dl>
<p class="summary">${review.summary}</p></div>

<h2>Tests</h2>
<div class="card">${testResult(review.validation)}</div>
${verificationView(review.verification)}

<h2>How to merge</h2>
<div class="card">${mergeSection(review)}</div>

<h2>Changes</h2>
${renderDiff(review.diff)}`,
  });
}

async function repositoryAccess(c: Context<WebEnv>, run: Remediation): Promise<Html> {
  const org = c.get("org");
  const manage = org.role !== "member";
  const named = run.requestedRepository?.includes("/") ? run.requestedRepository : undefined;
  const query = new URLSearchParams({
    ...(run.service ? { service: run.service } : {}),
    ...(named ? { provider: "github", fullName: named } : {}),
  }).toString();
  const register = `${repositoriesPath(org.id, run.environmentId)}/new${query ? `?${query}` : ""}`;
  const install = manage ? githubInstallLink(c) : undefined;
  return html`<p>The agent needs read access to the code of ${named ? html`<code>${named}</code>` : run.service ? html`the service <code>${run.service}</code>` : "the problem's service"}.
  There is nothing to approve here: register the repository that holds that service's code and the run resumes by itself.</p>
${
  manage
    ? html`<div class="actions"><a class="button" href="${register}">Register a repository</a>${when(
        install,
        () => html` <a class="button secondary" href="${install ?? ""}">Install the GitHub App</a>`,
      )}</div>`
    : html`<p class="muted">Only an owner or administrator of this organisation can register repositories.</p>`
}`;
}

async function highRiskChange(c: Context<WebEnv>, run: Remediation): Promise<Html> {
  let change: ProposedChange;
  try {
    change = await showProposedChange({
      ctx: c.get("ctx"),
      input: { environmentId: run.environmentId, remediationId: run.id },
    });
  } catch (error) {
    // The run is this organisation's (getRemediation read it): only the change is missing.
    if (!isAppError(error) || error.code !== "not_found") throw error;
    return html`<p class="muted">The proposed change is not available.</p>`;
  }
  return html`<h2>Why it needs approval</h2>
<ul>${join(change.risk.reasons.map((r) => html`<li>${r}</li>`))}</ul>
<h2>The agent's summary</h2>
<p class="summary">${change.summary}</p>
<h2>Files</h2>
<ul>${join(change.files.map((f) => html`<li><code>${f.path}</code>${f.deleted ? " (deleted)" : ""}</li>`))}</ul>
<p class="muted">Approving sends the change on to the repository's tests; only if they pass is it proposed for review
  (on a branch — patchbay never merges). Rejecting cancels the run.</p>
<h2>Diff</h2>
${renderDiff(change.diff)}`;
}

async function approvalPage(c: Context<WebEnv>): Promise<Response> {
  const { current } = c.get("environment");
  const remediationId = c.req.param("remediationId") ?? "";
  const run = await getRemediation({
    ctx: c.get("ctx"),
    input: { environmentId: current.id, remediationId },
  });
  const back = html`<p><a href="${runPath(run.id)}">Back to the run</a></p>`;
  if (run.status !== "awaiting-approval" || !run.approval) {
    return renderPage(c, {
      title: "Nothing waits for approval",
      section: "remediations",
      body: html`<div class="card"><p>${statusBadge(run.status)} ${statusExplanation(run)}</p>${back}</div>`,
    });
  }
  const manage = c.get("org").role !== "member";
  const highRisk = run.approval.kind === "high_risk_change";
  const buttons = html`<div class="actions">
  ${when(highRisk, () =>
    postForm(c, {
      action: `${runPath(run.id)}/approval`,
      label: "Approve the change",
      busy: "Approving…",
      body: html`<button type="submit">Approve</button>`,
    }),
  )}
  <a class="button danger" href="${runPath(run.id)}/rejection">${highRisk ? "Reject and cancel the run…" : "Cancel the run…"}</a>
  <a href="${runPath(run.id)}">Back to the run</a>
</div>`;
  return renderPage(c, {
    title: highRisk ? "Approve a high-risk change?" : "The run needs repository access",
    section: "remediations",
    lead: html`Remediation <a href="${runPath(run.id)}"><code>${run.id}</code></a> waits for a person.`,
    body: html`<div class="alert warning"><p>${run.approval.message}</p></div>
<div class="card">
${highRisk ? await highRiskChange(c, run) : await repositoryAccess(c, run)}
${manage ? buttons : html`<p class="muted">Only an owner or administrator of this organisation can approve or cancel.</p>${back}`}
</div>`,
  });
}

/** A run's proposed change: its review once proposed, and the approval it may wait for before. */
export function registerRemediationReviewPages(web: Hono<WebEnv>): void {
  web.get("/remediations/:remediationId/review", reviewPage);
  web.get("/remediations/:remediationId/approval", approvalPage);
  const act = (verb: typeof approveRemediation, done: string) => async (c: Context<WebEnv>) => {
    const environmentId = c.get("environment").current.id;
    const remediationId = c.req.param("remediationId") ?? "";
    await verb({ ctx: c.get("ctx"), input: { environmentId, remediationId } });
    return c.redirect(`${runPath(remediationId)}?done=${done}`, 303);
  };
  // Rejecting cancels the run: a page asks first, as for every destructive action.
  web.get("/remediations/:remediationId/rejection", async (c) => {
    const { current } = c.get("environment");
    const remediationId = c.req.param("remediationId") ?? "";
    const run = await getRemediation({
      ctx: c.get("ctx"),
      input: { environmentId: current.id, remediationId },
    });
    if (run.status !== "awaiting-approval") return c.redirect(runPath(run.id), 303);
    return confirmPage(c, {
      title: "Reject and cancel this remediation?",
      section: "remediations",
      text: html`<p>Run <code>${run.id}</code> is cancelled and proposes nothing. You can start a new run on the problem
  later.</p>`,
      action: `${runPath(run.id)}/rejection`,
      label: "Confirm rejection",
      button: html`<button type="submit" class="danger">Reject and cancel the run</button>`,
      cancel: `${runPath(run.id)}/approval`,
    });
  });
  web.post("/remediations/:remediationId/approval", act(approveRemediation, "approved"));
  web.post("/remediations/:remediationId/rejection", act(cancelRemediation, "rejected"));
}
