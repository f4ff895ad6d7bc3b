import type { ProblemStatus } from "../../../platform/db/schema/problems.ts";
import { type Html, html } from "../html.ts";

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
