import { requirePermission } from "../../context.ts";
import type { EnvironmentRead, ProblemSummary } from "../telemetry/index.ts";
import { getServiceHealth, listProblems, searchLogs, windowMs } from "../telemetry/index.ts";
import { incidentTerms } from "./incident-terms.ts";
import type { DiagnoseInput, Diagnosis } from "./schemas.ts";

/** How much evidence is read: the most recently seen problems and the newest error logs. */
const PROBLEMS_READ = 200;
const LOGS_READ = 200;
const BODY_CHARS = 500;

/** Whether `text` mentions `term`, also in the singular ("cards" finds "card declined"). */
const mentions = (text: string, term: string) =>
  text.includes(term) || (term.length > 4 && term.endsWith("s") && text.includes(term.slice(0, -1)));

type Scored<T> = { item: T; score: number; matched: string[] };

/**
 * Each term counts once, by the best field it appears in: the service's own name most (the
 * description named it), the title (with the exception type) and the culprit less. More
 * occurrences break ties between equal matches.
 */
function scoreProblem(p: ProblemSummary, terms: string[]): Scored<ProblemSummary> {
  const title = p.title.toLowerCase();
  const culprit = p.culprit.toLowerCase();
  const service = p.service.toLowerCase();
  let score = 0;
  const matched: string[] = [];
  for (const term of terms) {
    const hit = service === term ? 3 : mentions(title, term) || mentions(culprit, term) ? 2 : 0;
    if (hit > 0) matched.push(term);
    score += hit;
  }
  // Among equal matches, what is still happening comes first.
  if (score > 0 && (p.status === "open" || p.status === "regressed")) score += 1;
  return { item: p, score, matched };
}

const best = <T>(scored: Scored<T>[], n: number, weight: (item: T) => number = () => 0) =>
  scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || weight(b.item) - weight(a.item))
    .slice(0, n);

function confidenceOf(top: Scored<unknown> | undefined, second: Scored<unknown> | undefined) {
  if (!top) return "none" as const;
  if (top.matched.length >= 2 && top.score >= 5 && top.score > (second?.score ?? 0)) return "high" as const;
  return top.score >= 3 ? ("medium" as const) : ("low" as const);
}

/**
 * Reads an incident description against the environment's own telemetry — problems, error logs
 * and service health of the window — and says what the evidence points at. Deterministic and
 * bounded (no model): it ranks what is stored; the caller turns the result into the cheapest next
 * step. Tenancy: the reads are the caller's, of the one environment it names (or its default).
 */
export async function diagnoseIncident({ ctx, input }: EnvironmentRead<DiagnoseInput>): Promise<Diagnosis> {
  requirePermission(ctx, "telemetry:read");
  const { environmentId, service, window } = input;
  const terms = incidentTerms(input.description);
  const now = ctx.deps.clock();
  const to = now.toISOString();
  const from = new Date(now.getTime() - windowMs[window]).toISOString();
  const [problemPage, logPage, health] = await Promise.all([
    listProblems({ ctx, input: { environmentId, pageSize: PROBLEMS_READ, service } }),
    searchLogs({ ctx, input: { environmentId, from, to, service, severity: "error", pageSize: LOGS_READ } }),
    getServiceHealth({ ctx, input: { environmentId, window, pageSize: 200 } }),
  ]);

  const problems = best(
    problemPage.items.map((p) => scoreProblem(p, terms)),
    3,
    (p) => p.count,
  );
  const logs = best(
    logPage.items.map((log) => {
      const body = (log.body ?? "").toLowerCase();
      const matched = terms.filter((t) => mentions(body, t) || log.service.toLowerCase() === t);
      return { item: log, score: matched.length, matched };
    }),
    5,
  ).sort((a, b) => b.item.time.localeCompare(a.item.time));
  const services = health.items
    .filter((s) => s.errorCount > 0 && (!service || s.service === service))
    .sort((a, b) => (b.errorRate ?? 0) - (a.errorRate ?? 0))
    .slice(0, 3);

  const top = problems[0];
  const confidence = confidenceOf(top ?? logs[0], top ? problems[1] : logs[1]);
  return {
    summary: summarize({ top: top?.item, log: logs[0]?.item, service: services[0], window }),
    confidence,
    terms,
    window,
    evidence: {
      problems: problems.map(({ item, matched }) => ({
        id: item.id,
        title: item.title,
        culprit: item.culprit,
        service: item.service,
        status: item.status,
        count: item.count,
        lastSeen: item.lastSeen,
        remediationId: item.remediationId,
        remediationState: item.remediationState,
        matched,
      })),
      logs: logs.map(({ item, matched }) => ({
        time: item.time,
        service: item.service,
        severity: item.severity,
        body: item.body === null ? null : item.body.slice(0, BODY_CHARS),
        traceId: item.traceId,
        matched,
      })),
      services: services.map((s) => ({
        service: s.service,
        requestCount: s.requestCount,
        errorCount: s.errorCount,
        errorRate: s.errorRate,
        p95Ms: s.latencyMs?.p95 ?? null,
      })),
    },
  };
}

function summarize(f: {
  top: ProblemSummary | undefined;
  log: { service: string; body: string | null } | undefined;
  service: { service: string; errorRate: number | null; errorCount: number } | undefined;
  window: string;
}): string {
  if (f.top) {
    const run = f.top.remediationState ? ` A remediation is ${f.top.remediationState}.` : "";
    return `Most likely "${f.top.title}" in ${f.top.service} (${f.top.culprit}): ${f.top.count} occurrences, last seen ${f.top.lastSeen}, ${f.top.status}.${run}`;
  }
  if (f.log) return `No detected problem matches; error logs of ${f.log.service} in the last ${f.window} do.`;
  if (f.service) {
    const rate =
      f.service.errorRate === null ? "" : ` (${(f.service.errorRate * 100).toFixed(1)} % of requests)`;
    return `Nothing matches the description, but ${f.service.service} had ${f.service.errorCount} failed requests${rate} in the last ${f.window}.`;
  }
  return `Nothing in the telemetry of the last ${f.window} matches the description, and no service reported errors.`;
}
