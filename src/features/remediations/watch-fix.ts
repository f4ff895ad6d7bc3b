import { and, asc, count, desc, eq, gt, inArray, max, min, sql } from "drizzle-orm";
import { systemContext, withTransaction } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { isAppError } from "../../errors.ts";
import type { Db } from "../../platform/db/client.ts";
import { problemSpans, problems } from "../../platform/db/schema/problems.ts";
import {
  type RemediationWatch,
  remediations,
  type WatchOccurrence,
} from "../../platform/db/schema/remediations.ts";
import { telemetryEntrySpans, telemetryResources } from "../../platform/db/schema/telemetry.ts";
import { getTrace } from "../telemetry/index.ts";
import { emitWebhookEventBestEffort } from "../webhooks/index.ts";
import { appendEvent, type RemediationRow } from "./run-state.ts";

const MAX_OCCURRENCES = 10;
/** How many runs one sweep looks at. */
const SWEEP_BATCH = 100;

/**
 * Announces a problem that regressed after its fix was merged: the log line and the problem's
 * webhook event (`problem.regressed`). Runs inside the transaction that marks the problem
 * regressed, so an announcement commits with the regression or not at all; a failed event insert
 * is rolled back alone and never undoes the regression.
 */
async function announceRegression(
  tx: Db,
  deps: Pick<Deps, "logger">,
  regression: {
    run: RemediationRow;
    problem: Pick<
      typeof problems.$inferSelect,
      "id" | "organizationId" | "environmentId" | "title" | "serviceName" | "lastSeen" | "resolvedAt"
    >;
    occurrences: WatchOccurrence[];
    at: Date;
  },
): Promise<void> {
  const { run, problem, occurrences, at } = regression;
  deps.logger.info(
    { remediationId: run.id, problemId: problem.id, occurrences: occurrences.length },
    "problem regressed after its fix was merged",
  );
  await emitWebhookEventBestEffort(tx, deps.logger, {
    organizationId: problem.organizationId,
    type: "problem.regressed",
    at,
    data: {
      organizationId: problem.organizationId,
      environmentId: problem.environmentId,
      problemId: problem.id,
      title: problem.title,
      service: problem.serviceName,
      lastSeen: problem.lastSeen.toISOString(),
      resolvedAt: problem.resolvedAt?.toISOString() ?? null,
    },
  });
}

/** The watch a fix starts with at its merge: the `service.version`s its service reported until then. */
export async function startWatch(tx: Db, run: RemediationRow, mergedAt: Date): Promise<RemediationWatch> {
  return {
    state: "watching",
    mergedAt: mergedAt.toISOString(),
    versionsAtMerge: run.service ? await serviceVersions(tx, run.environmentId, run.service) : [],
    occurrences: [],
    decidedAt: null,
    evidence: null,
    traffic: null,
  };
}

async function serviceVersions(db: Db, environmentId: string, service: string, after?: string) {
  const version = sql<string | null>`${telemetryResources.attributes}->>'service.version'`;
  const rows = await db
    .selectDistinct({ version })
    .from(telemetryResources)
    .where(
      and(
        eq(telemetryResources.environmentId, environmentId),
        eq(telemetryResources.serviceName, service),
        after ? gt(telemetryResources.lastSeen, after) : undefined,
      ),
    );
  return rows.flatMap((r) => (r.version ? [r.version] : [])).sort();
}

/**
 * Decides the watch of one merged fix from the telemetry since its merge. An occurrence of the
 * problem's fingerprint counts against the fix when it comes from a `service.version` the service
 * did not report before the merge, or — carrying no version — when it arrived after the grace
 * period (the old code may still run while the fix deploys). One such occurrence: the problem is
 * `regressed` and the run shows "regressed after merge". None, while the service's traffic went
 * on past the quiet window (from a new version, when the service reports versions): closed as
 * fixed. Otherwise it keeps watching. Returns the run as it is now.
 */
export async function evaluateWatch(deps: Deps, run: RemediationRow): Promise<RemediationRow> {
  const watch = run.watch;
  if (run.status !== "merged" || watch?.state !== "watching" || !run.problemId || !run.service) return run;
  const settings = deps.config.remediation.watch;
  const now = deps.clock();
  const mergedAt = new Date(watch.mergedAt);
  const [problem] = await deps.db
    .select({ fingerprint: problems.fingerprint, status: problems.status })
    .from(problems)
    .where(and(eq(problems.id, run.problemId), eq(problems.environmentId, run.environmentId)));
  if (!problem) return run;

  const since = await deps.db
    .select({ traceId: problemSpans.traceId, spanId: problemSpans.spanId, at: problemSpans.recordedAt })
    .from(problemSpans)
    .where(
      and(
        eq(problemSpans.environmentId, run.environmentId),
        eq(problemSpans.fingerprint, problem.fingerprint),
        gt(problemSpans.recordedAt, watch.mergedAt),
      ),
    )
    .orderBy(desc(problemSpans.recordedAt))
    .limit(MAX_OCCURRENCES * 5);
  const graceEnds = mergedAt.getTime() + settings.graceMs;
  // Newest first; each version is read from its stored trace, so reading stops at the cap.
  const counted: WatchOccurrence[] = [];
  for (const o of since) {
    if (counted.length === MAX_OCCURRENCES) break;
    const occurrence = {
      at: new Date(o.at).toISOString(),
      traceId: o.traceId,
      spanId: o.spanId,
      serviceVersion: await versionOfSpan(deps, run, o.traceId, o.spanId),
    };
    const countsAgainstFix =
      occurrence.serviceVersion !== null
        ? !watch.versionsAtMerge.includes(occurrence.serviceVersion)
        : Date.parse(occurrence.at) >= graceEnds;
    if (countsAgainstFix) counted.push(occurrence);
  }

  if (counted.length > 0) {
    const versions = [...new Set(counted.flatMap((o) => (o.serviceVersion ? [o.serviceVersion] : [])))];
    const evidence = `Regressed after merge: ${counted.length} new occurrence(s) of the problem since ${watch.mergedAt}${
      versions.length > 0
        ? ` from service.version ${versions.join(", ")} (not reported before the merge)`
        : ` after the grace period of ${settings.graceMs} ms`
    }; the latest at ${counted[0]?.at}.`;
    return decide(deps, run, { ...watch, state: "regressed", occurrences: counted }, evidence, async (tx) => {
      const [problem] = await tx
        .update(problems)
        .set({
          status: "regressed",
          revision: sql`${problems.revision} + 1`,
          statusChangedAt: now,
          updatedAt: now,
        })
        .where(and(eq(problems.id, run.problemId ?? ""), inArray(problems.status, ["open", "resolved"])))
        .returning({
          id: problems.id,
          organizationId: problems.organizationId,
          environmentId: problems.environmentId,
          title: problems.title,
          serviceName: problems.serviceName,
          lastSeen: problems.lastSeen,
          resolvedAt: problems.resolvedAt,
        });
      // Announced on the transition only: a problem already regressed was announced then.
      if (problem) await announceRegression(tx, deps, { run, problem, occurrences: counted, at: now });
    });
  }

  const windowEnds = mergedAt.getTime() + settings.quietWindowMs;
  if (now.getTime() < windowEnds) return run;
  const [traffic] = await deps.db
    .select({
      spans: count(),
      firstAt: min(telemetryEntrySpans.startTime),
      lastAt: max(telemetryEntrySpans.startTime),
    })
    .from(telemetryEntrySpans)
    .where(
      and(
        eq(telemetryEntrySpans.environmentId, run.environmentId),
        eq(telemetryEntrySpans.serviceName, run.service),
        gt(telemetryEntrySpans.startTime, watch.mergedAt),
      ),
    );
  const lastAt = traffic?.lastAt ? new Date(traffic.lastAt) : undefined;
  // The service must have kept sending traffic through the whole window.
  if (!traffic || !lastAt || lastAt.getTime() < windowEnds) return run;
  const versionsAfter = await serviceVersions(deps.db, run.environmentId, run.service, watch.mergedAt);
  const newVersions = versionsAfter.filter((v) => !watch.versionsAtMerge.includes(v));
  // A service that reports versions and reports no new one has not deployed the fix yet.
  if (watch.versionsAtMerge.length > 0 && newVersions.length === 0) return run;
  const summary = {
    spans: traffic.spans,
    firstAt: traffic.firstAt ? new Date(traffic.firstAt).toISOString() : null,
    lastAt: lastAt.toISOString(),
    versions: versionsAfter,
  };
  const evidence = `Fixed: ${summary.spans} request(s) of ${run.service} from ${summary.firstAt} to ${summary.lastAt}${
    newVersions.length > 0 ? ` (service.version ${newVersions.join(", ")})` : ""
  } and no occurrence of the problem counted against the fix over the ${settings.quietWindowMs} ms window after the merge.`;
  return decide(deps, run, { ...watch, state: "fixed", occurrences: [], traffic: summary }, evidence);
}

/** Moves the watch to its decided state with its event (and `also`), once: the first decision wins. */
async function decide(
  deps: Deps,
  run: RemediationRow,
  next: RemediationWatch,
  evidence: string,
  also?: (tx: Db) => Promise<void>,
): Promise<RemediationRow> {
  const now = deps.clock();
  const watch = { ...next, decidedAt: now.toISOString(), evidence };
  return withTransaction(deps.db, async (tx) => {
    const [updated] = await tx
      .update(remediations)
      .set({ watch, updatedAt: now })
      .where(and(eq(remediations.id, run.id), sql`${remediations.watch}->>'state' = 'watching'`))
      .returning();
    if (!updated) {
      const [current] = await tx.select().from(remediations).where(eq(remediations.id, run.id));
      return current ?? run;
    }
    await appendEvent(tx, deps, run.id, {
      type: watch.state === "regressed" ? "regressed" : "fix_confirmed",
      message: evidence,
      data: { occurrences: watch.occurrences.length, traffic: watch.traffic },
    });
    await also?.(tx);
    return updated;
  });
}

async function versionOfSpan(deps: Deps, run: RemediationRow, traceId: string, spanId: string) {
  const ctx = systemContext(deps, {
    name: "remediation-watch",
    id: run.id,
    organizationId: run.organizationId,
  });
  try {
    const trace = await getTrace({ ctx, input: { environmentId: run.environmentId, traceId } });
    const span = trace.spans.find((s) => s.spanId === spanId);
    const version = span?.resourceAttributes?.["service.version"];
    return typeof version === "string" && version !== "" ? version : null;
  } catch (error) {
    if (isAppError(error) && error.code === "not_found") return null;
    throw error;
  }
}

/**
 * Decides the watches of merged fixes still watching (the periodic sweep), a batch at a time in id
 * order, so that watches still undecided never keep later ones from their turn; returns how many
 * it read.
 */
export async function watchMergedFixes(deps: Deps): Promise<number> {
  let read = 0;
  let after = "";
  for (;;) {
    const rows = await deps.db
      .select()
      .from(remediations)
      .where(
        and(
          eq(remediations.status, "merged"),
          sql`${remediations.watch}->>'state' = 'watching'`,
          gt(remediations.id, after),
        ),
      )
      .orderBy(asc(remediations.id))
      .limit(SWEEP_BATCH);
    for (const row of rows) await evaluateWatch(deps, row);
    read += rows.length;
    const last = rows.at(-1);
    if (!last || rows.length < SWEEP_BATCH) return read;
    after = last.id;
  }
}
