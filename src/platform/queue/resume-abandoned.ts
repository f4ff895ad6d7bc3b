import type PgBoss from "pg-boss";

/**
 * pg-boss 10 has a single retry budget for "the handler threw" and "the run was abandoned", and
 * no heartbeat. We want the first final (retryLimit 0: an agent task is not re-run because it
 * failed) and the second resumed (a task survives a deploy or a crash). So abandoned runs are
 * recognised by the output pg-boss itself records when it gives them up:
 * - "pg-boss shut down while active": `stop()` reached its timeout with the handler still running;
 * - "job failed by timeout in active state": maintenance found the run active past its
 *   expiration, i.e. no live worker finished or failed it (a live one fails its own overrunning
 *   run first, with "handler execution exceeded", which is *not* resumed: it may still be running).
 * Each is put back with pg-boss's own `retry()`, which raises the job's retry limit by one, so a
 * resumed run that then throws is failed for good. `maxRuns` bounds a job that kills every process
 * that runs it. Reads pg-boss's table (10.x has no query for it); writes only through its API.
 */
const abandonedJobs = `
  SELECT name, id FROM pgboss.job
  WHERE name = ANY($1::text[])
    AND state = 'failed'
    AND retry_count + 1 < $2
    AND (output->>'value' = 'pg-boss shut down while active'
      OR output->'value'->>'message' = 'job failed by timeout in active state')`;

export async function resumeAbandonedJobs(args: {
  boss: PgBoss;
  queues: readonly string[];
  maxRuns: number;
}): Promise<Map<string, string[]>> {
  const result = await args.boss.getDb().executeSql(abandonedJobs, [args.queues, args.maxRuns]);
  const byQueue = new Map<string, string[]>();
  // `undefined` once the instance is stopped (see `gated`).
  for (const row of (result?.rows ?? []) as { name: string; id: string }[]) {
    byQueue.set(row.name, [...(byQueue.get(row.name) ?? []), row.id]);
  }
  for (const [queue, ids] of byQueue) await args.boss.retry(queue, ids);
  return byQueue;
}
