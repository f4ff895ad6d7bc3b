import type { Remediation } from "../../../features/remediations/schemas.ts";
import type { RemediationStatus } from "../../../platform/db/schema/remediations.ts";
import { type Html, html, join, nothing, when } from "../html.ts";

export const repositoriesPath = (orgId: string, environmentId: string) =>
  `/orgs/${orgId}/environments/${environmentId}/repositories`;
export const remediationsPath = (orgId: string, environmentId: string) =>
  `/orgs/${orgId}/environments/${environmentId}/remediations`;
/** The run's own page: the `threadUrl` patchbay hands out, relative to this server. */
export const runPath = (remediationId: string) => `/remediations/${remediationId}`;
export const startPath = (orgId: string, environmentId: string, problemId: string) =>
  `/orgs/${orgId}/environments/${environmentId}/problems/${encodeURIComponent(problemId)}/remediations`;

/** Statuses in which a worker is (or is about to be) busy with the run: its page refreshes. */
export const workingStatuses: readonly RemediationStatus[] = [
  "queued",
  "investigating",
  "coding",
  "validating",
  "opening-pr",
];
export const endedStatuses: readonly RemediationStatus[] = ["merged", "closed", "failed", "cancelled"];

const statusLabels: Record<RemediationStatus, string> = {
  queued: "Queued",
  investigating: "Investigating",
  "awaiting-approval": "Waiting for you",
  coding: "Writing the change",
  validating: "Running the tests",
  "opening-pr": "Opening the review",
  "awaiting-review": "Ready for review",
  merged: "Merged",
  closed: "Closed",
  failed: "Failed",
  cancelled: "Cancelled",
};

/** The status as a badge; the class groups statuses by what they ask of a person. */
export function statusBadge(status: RemediationStatus): Html {
  const kind = workingStatuses.includes(status)
    ? "working"
    : status === "awaiting-approval" || status === "awaiting-review"
      ? "waiting"
      : status === "merged"
        ? "ready"
        : status === "failed"
          ? "no"
          : "disabled";
  return html`<span class="badge ${kind}" data-status="${status}">${statusLabels[status]}</span>`;
}

const explanations: Record<Exclude<RemediationStatus, "awaiting-approval">, string> = {
  queued: "Accepted. A worker is about to look for the repository of the problem's service.",
  investigating: "The agent is reading the problem, its traces and logs, and the code.",
  coding: "The agent is changing files in an isolated working copy and running the repository's tests.",
  validating:
    "The repository's test command runs in the sandbox on a fresh copy with exactly the proposed files.",
  "opening-pr": "The tests passed. The commit is being written on the run's branch and the review opened.",
  "awaiting-review":
    "The fix is proposed and its tests pass. Review it and merge it yourself — patchbay never merges.",
  merged: "A person merged the fix.",
  closed: "The review was closed (or the branch deleted) without merging.",
  failed: "The run ended without proposing a fix; the reason is below.",
  cancelled: "The run was cancelled on request.",
};

/** What the status means for the person reading the page, in a sentence or two. */
export function statusExplanation(
  run: Pick<Remediation, "status" | "approval" | "service" | "requestedRepository">,
): string {
  if (run.status !== "awaiting-approval") return explanations[run.status];
  if (run.approval?.kind === "repository_access" && run.requestedRepository) {
    return `The run was asked to work in ${run.requestedRepository}, which is not registered in this environment. Register it and the run resumes by itself.`;
  }
  return run.approval?.kind === "repository_access"
    ? `No repository is registered for the service${run.service ? ` "${run.service}"` : ""}. Register one and the run resumes by itself.`
    : "The proposed change touches something risky; an owner or administrator must approve it before it is tested and proposed.";
}

type DiffFile = { path: string; lines: string[]; added: number; removed: number };

/** Splits a unified diff (`git diff` output) into its files; text before the first header is kept. */
function splitDiff(diff: string): DiffFile[] {
  const files: DiffFile[] = [];
  let current: DiffFile | undefined;
  for (const line of diff.split("\n")) {
    const header = /^diff --git a\/(.+) b\/(.+)$/.exec(line);
    if (header || !current) {
      current = { path: header?.[2] ?? "", lines: [], added: 0, removed: 0 };
      files.push(current);
    }
    current.lines.push(line);
    if (line.startsWith("+") && !line.startsWith("+++")) current.added++;
    if (line.startsWith("-") && !line.startsWith("---")) current.removed++;
  }
  return files.filter((f) => f.path !== "" || f.lines.some((l) => l.trim() !== ""));
}

function lineClass(line: string): string {
  if (
    /^(diff --git|index |--- |\+\+\+ |new file|deleted file|similarity|rename |old mode|new mode)/.test(line)
  )
    return "meta";
  if (line.startsWith("@@")) return "hunk";
  if (line.startsWith("+")) return "add";
  if (line.startsWith("-")) return "del";
  return "ctx";
}

/**
 * A diff for reading: one block per file with its +/- counts, each line coloured by kind. Every
 * line is text (escaped by the template), so a diff containing markup shows it, never runs it.
 */
export function renderDiff(diff: string): Html {
  const files = splitDiff(diff);
  if (files.length === 0) return html`<p class="muted">The diff is empty.</p>`;
  return join(
    files.map(
      (f) => html`<section class="diff-file">
  <h3>${f.path ? html`<code>${f.path}</code>` : "Diff"} <span class="diff-count"><span class="add">+${f.added}</span> <span class="del">−${f.removed}</span></span></h3>
  <pre class="diff"><code>${join(
    f.lines.map((l) => html`<span class="${lineClass(l)}">${l}</span>`),
  )}</code></pre>
</section>`,
    ),
  );
}

/** The repository test run's outcome, with the tail of its output. */
export function testResult(validation: Remediation["validation"]): Html {
  if (!validation) return html`<p class="muted">The tests have not run yet.</p>`;
  const passed = validation.exitCode === 0 && !validation.timedOut;
  const seconds = (validation.durationMs / 1000).toFixed(1);
  return html`<p>${
    passed
      ? html`<span class="badge ready">Passed</span>`
      : html`<span class="badge no">${validation.timedOut ? "Timed out" : "Failed"}</span>`
  } exit code <code>${validation.exitCode ?? "none"}</code> after ${seconds} s</p>
${when(validation.outputTail.trim() !== "", () => html`<details${passed ? nothing : html` open`}><summary>Output (the last lines)</summary><pre>${validation.outputTail}</pre></details>`)}`;
}

const verificationLabels: Record<string, string> = {
  "reproduced-and-fixed": "Reproduced and fixed",
  "fixed-without-reproduction": "Fixed without reproduction",
  "not-fixed": "Not fixed",
};

/** One recorded test run of a verification: command, exit code, the failure lines. */
const verificationRun = (title: string, r: NonNullable<Remediation["verification"]>["baseRun"]) =>
  when(
    r,
    () => html`<h3>${title}</h3>
<p><code>${r?.command}</code> exited <code>${r?.exitCode ?? "killed"}</code>${r?.timedOut ? " (timed out)" : ""}</p>
${when((r?.output ?? "").trim() !== "", () => html`<details><summary>What it printed (the relevant lines)</summary><pre>${r?.output}</pre></details>`)}`,
  );

/**
 * How sure the run is of its fix, as patchbay established it in the sandbox: the state, the
 * reason when it has no reproduction, the failing run on the default branch, the passing run on
 * the fix branch and the test's diff.
 */
export function verificationView(v: Remediation["verification"]): Html {
  if (!v) return nothing;
  const badge = v.state === "reproduced-and-fixed" ? "ok" : v.state === "not-fixed" ? "no" : "warn";
  return html`<h2>Verification</h2>
<div class="card verification">
  <p><span class="badge ${badge}" data-verification="${v.state}">${verificationLabels[v.state] ?? v.state}</span>
  ${v.reproduction?.matched ? html` Fails on the default branch with ${v.reproduction.matched}.` : nothing}</p>
  ${when(v.reason, () => html`<p class="reason">${v.reason}</p>`)}
  ${verificationRun("On the default branch (base commit and the test only)", v.baseRun)}
  ${verificationRun("On the fix branch", v.branchRun)}
  ${verificationRun("The whole test command on the fix branch", v.suiteRun)}
  ${when(v.reproduction?.testDiff, () => html`<details><summary>The reproducing test (${(v.reproduction?.tests ?? []).join(", ")})</summary><pre>${v.reproduction?.testDiff}</pre></details>`)}
</div>`;
}

/** After the merge: whether the fix held (regressed after merge, with the occurrences, or closed as fixed). */
export function watchView(w: Remediation["watch"]): Html {
  if (!w) return nothing;
  const label =
    w.state === "regressed" ? "Regressed after merge" : w.state === "fixed" ? "Closed as fixed" : "Watching";
  const badge = w.state === "regressed" ? "no" : w.state === "fixed" ? "ok" : "warn";
  return html`<h2>After the merge</h2>
<div class="card watch">
  <p><span class="badge ${badge}" data-watch="${w.state}">${label}</span> merged ${w.mergedAt}</p>
  ${when(w.evidence, () => html`<p>${w.evidence}</p>`)}
  ${when(
    w.occurrences.length > 0,
    () =>
      html`<table><thead><tr><th>At</th><th>Trace</th><th>service.version</th></tr></thead><tbody>${join(
        w.occurrences.map(
          (o) =>
            html`<tr><td>${o.at}</td><td><code>${o.traceId}</code></td><td>${o.serviceVersion ?? "—"}</td></tr>`,
        ),
      )}</tbody></table>`,
  )}
</div>`;
}
