import type { Context, Hono } from "hono";
import { isAppError } from "../../../errors.ts";
import { getRemediationReview } from "../../../features/remediations/get-remediation.ts";
import type { RemediationReview } from "../../../features/remediations/schemas.ts";
import type { WebEnv } from "../env.ts";
import { type Html, html, join, when } from "../html.ts";
import { renderPage } from "../layout.ts";
import { renderDiff, runPath, statusBadge, testResult } from "./remediation-view.ts";

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

<h2>How to merge</h2>
<div class="card">${mergeSection(review)}</div>

<h2>Changes</h2>
${renderDiff(review.diff)}`,
  });
}

export function registerRemediationReviewPage(web: Hono<WebEnv>): void {
  web.get("/remediations/:remediationId/review", reviewPage);
}
