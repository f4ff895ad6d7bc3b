import type { Db } from "../../db/client.ts";
import { telemetryLogs, telemetryMetricPoints, telemetrySpans } from "../../db/schema/telemetry.ts";
import type { Logger } from "../../logger.ts";
import { sweepTelemetry } from "./sweep-telemetry.ts";
import type { TelemetryStore, TelemetryTenant } from "./telemetry-store.ts";

/** Rows per INSERT: ~20 columns × 500 stays far below PostgreSQL's 65,535 parameters. */
const CHUNK = 500;

/**
 * Telemetry in the service database. Each write is one multi-row INSERT, or several chunks in one
 * transaction: all of a request's records or none. A retention sweep runs every `sweepEveryMs`
 * on an unref'd timer (it never keeps the process alive); `close()` stops it.
 */
export function createPostgresTelemetryStore(args: {
  db: Db;
  logger: Logger;
  clock: () => Date;
  retention?: { days: number; sweepEveryMs: number };
}): TelemetryStore {
  const { db } = args;
  const insertChunks = async <T>(rows: T[], insert: (tx: Db, chunk: T[]) => Promise<unknown>) => {
    if (rows.length === 0) return;
    if (rows.length <= CHUNK) {
      await insert(db, rows);
      return;
    }
    await db.transaction(async (tx) => {
      for (let i = 0; i < rows.length; i += CHUNK)
        await insert(tx as unknown as Db, rows.slice(i, i + CHUNK));
    });
  };
  const tenantOf = (tenant: TelemetryTenant) => ({
    organizationId: tenant.organizationId,
    environmentId: tenant.environmentId,
  });

  let timer: NodeJS.Timeout | undefined;
  if (args.retention) {
    const { days, sweepEveryMs } = args.retention;
    timer = setInterval(() => {
      sweepTelemetry(db, args.clock(), days)
        .then((result) => args.logger.info(result, "telemetry retention sweep"))
        .catch((err: unknown) => args.logger.warn({ err }, "telemetry retention sweep failed"));
    }, sweepEveryMs);
    timer.unref();
  }

  return {
    writeSpans: (tenant, records) =>
      insertChunks(
        records.map((r) => ({ ...tenantOf(tenant), ...r })),
        // Re-sent spans (an exporter retrying after a lost answer) are skipped, never duplicated.
        (tx, chunk) => tx.insert(telemetrySpans).values(chunk).onConflictDoNothing(),
      ),
    writeLogs: (tenant, records) =>
      insertChunks(
        records.map((r) => ({ ...tenantOf(tenant), ...r })),
        (tx, chunk) => tx.insert(telemetryLogs).values(chunk),
      ),
    writeMetricPoints: (tenant, records) =>
      insertChunks(
        records.map((r) => ({ ...tenantOf(tenant), ...r })),
        (tx, chunk) => tx.insert(telemetryMetricPoints).values(chunk),
      ),
    sweep: (cutoff) => sweepTelemetry(db, cutoff, 0),
    close() {
      clearInterval(timer);
    },
  };
}
