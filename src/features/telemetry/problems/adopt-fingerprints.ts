import type { Logger } from "../../../platform/logging/logger.ts";
import type { TelemetryDatabase } from "../storage/sql-runner.ts";
import type { TelemetryTenant } from "../telemetry-records.ts";
import type { ProblemOccurrence } from "./fingerprint.ts";

/** Legacy fingerprints checked per process before the set starts over. */
const MAX_CHECKED = 10_000;

/**
 * Carries problems over a change of the message masks (legacy-fingerprint.ts), as Sentry does
 * when its grouping changes: before a batch is written, a problem stored under an occurrence's
 * legacy fingerprint takes the occurrence's new fingerprint (and its title), unless a problem has
 * that fingerprint already. So an upgrade neither splits a problem nor resets its status, history
 * or remediation. When several old problems fold into one new fingerprint (ids the old masks
 * missed), the first seen after the upgrade continues and the others stop growing.
 *
 * Its own short transaction, committed before the batch's: a renaming is right whether or not
 * the batch commits, and row locks on old problems are never held with the batch's. Losing a race
 * (another instance created or adopted the new fingerprint first: unique violation; or a
 * deadlock) leaves the old problem as it is and the occurrences go to the new one. Each
 * (environment, legacy fingerprint) is looked up once per process: a legacy fingerprint that
 * matched nothing will not match later (only old versions create them).
 */
export function fingerprintAdoption(args: { database: TelemetryDatabase; logger: Logger }) {
  let checked = new Set<string>();
  return async (batches: { tenant: TelemetryTenant; occurrences: ProblemOccurrence[] }[]): Promise<void> => {
    const byEnvironment = new Map<
      string,
      Map<string, { legacy: string; fingerprint: string; title: string }>
    >();
    for (const { tenant, occurrences } of batches) {
      for (const o of occurrences) {
        const key = `${tenant.environmentId}/${o.legacyFingerprint}`;
        if (!o.legacyFingerprint || checked.has(key)) continue;
        const renames = byEnvironment.get(tenant.environmentId) ?? new Map();
        // One old problem per new fingerprint: two renamed into one would collide.
        if (!renames.has(o.fingerprint))
          renames.set(o.fingerprint, {
            legacy: o.legacyFingerprint,
            fingerprint: o.fingerprint,
            title: o.title,
          });
        byEnvironment.set(tenant.environmentId, renames);
      }
    }
    if (byEnvironment.size === 0) return;
    const environments = [...byEnvironment].sort(([a], [b]) => (a < b ? -1 : 1));
    try {
      await args.database.transaction(async (run) => {
        for (const [environmentId, renames] of environments) {
          await run.query(
            `with m as (select * from jsonb_to_recordset($2::text::jsonb) as m(legacy text, fingerprint text, title text)),
                  old as (select p.id, m.fingerprint, m.title from problems p join m on p.fingerprint = m.legacy
                           where p.environment_id = $1::uuid order by p.fingerprint for update of p)
             update problems p set fingerprint = old.fingerprint, title = old.title
               from old
              where p.id = old.id
                and not exists (select 1 from problems q
                                 where q.environment_id = $1::uuid and q.fingerprint = old.fingerprint)`,
            [environmentId, JSON.stringify([...renames.values()])],
          );
        }
      });
    } catch (err) {
      if (!lostRace(err)) throw err;
      args.logger.debug({ err }, "a problem's fingerprint was adopted concurrently; leaving the old problem");
    }
    if (checked.size > MAX_CHECKED) checked = new Set();
    for (const [environmentId, renames] of environments) {
      for (const { legacy } of renames.values()) checked.add(`${environmentId}/${legacy}`);
    }
  };
}

/** unique_violation (the new fingerprint was taken meanwhile) or deadlock_detected. */
function lostRace(error: unknown): boolean {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = e?.code ?? e?.cause?.code;
  return code === "23505" || code === "40P01";
}
