import type { TelemetryDatabase } from "../storage/sql-runner.ts";
import type { TelemetryTenant } from "../telemetry-records.ts";
import type { ProblemOccurrence } from "./fingerprint.ts";
import { recordProblems } from "./record-problems.ts";

/** Deferred logs claimed per transaction. */
const BATCH = 500;

/**
 * Ends the wait of error logs deferred at least `waitMs` before `now` (record-problems.ts): each
 * becomes evidence on its span's problem if the span has one by now, else an occurrence grouped on
 * its own. Safe on several instances at once: a transaction claims its rows with `skip locked`
 * and deletes them as it groups them, so each log is grouped once, and a failed transaction puts
 * its rows back. `adopt` runs before each transaction, as for ingested batches
 * (adopt-fingerprints.ts). Answers how many logs were grouped.
 */
export async function groupDeferredLogs(args: {
  database: TelemetryDatabase;
  now: Date;
  waitMs: number;
  adopt: (batches: { tenant: TelemetryTenant; occurrences: ProblemOccurrence[] }[]) => Promise<void>;
}): Promise<number> {
  const cutoff = new Date(args.now.getTime() - args.waitMs).toISOString();
  let total = 0;
  for (;;) {
    const due = await args.database.transaction((run) =>
      run.query(
        `select organization_id, environment_id, occurrence from problem_deferred_logs
          where received_at <= $1::timestamptz order by received_at, id limit ${BATCH}`,
        [cutoff],
      ),
    );
    if (due.length === 0) return total;
    await args.adopt([...byEnvironment(due).values()]);
    const grouped = await args.database.transaction(async (run) => {
      const claimed = await run.query(
        `with due as (select id from problem_deferred_logs where received_at <= $1::timestamptz
                       order by received_at, id limit ${BATCH} for update skip locked)
         delete from problem_deferred_logs d using due where d.id = due.id
         returning d.organization_id, d.environment_id, d.occurrence`,
        [cutoff],
      );
      const environments = [...byEnvironment(claimed).values()].sort((a, b) =>
        a.tenant.environmentId < b.tenant.environmentId ? -1 : 1,
      );
      for (const { tenant, occurrences } of environments) {
        await recordProblems(run, tenant, occurrences, args.now, { defer: false });
      }
      return claimed.length;
    });
    total += grouped;
    // Fewer than a batch left, or another instance holds them all: it groups them.
    if (due.length < BATCH || grouped === 0) return total;
  }
}

function byEnvironment(rows: Record<string, unknown>[]) {
  const out = new Map<string, { tenant: TelemetryTenant; occurrences: ProblemOccurrence[] }>();
  for (const row of rows) {
    const tenant = { organizationId: String(row.organization_id), environmentId: String(row.environment_id) };
    const entry = out.get(tenant.environmentId) ?? { tenant, occurrences: [] };
    // postgres.js and PGlite both parse jsonb; a driver that did not would hand over its text.
    const occurrence = typeof row.occurrence === "string" ? JSON.parse(row.occurrence) : row.occurrence;
    entry.occurrences.push(occurrence as ProblemOccurrence);
    out.set(tenant.environmentId, entry);
  }
  return out;
}
