import { requirePermission } from "../../../context.ts";
import { AppError } from "../../../errors.ts";
import { callerEnvironment } from "../../environments/index.ts";
import type { EnvironmentRead, LogPage, LogSearchQueryInput } from "./schemas.ts";
import { minSeverityNumber, severityName } from "./severity.ts";
import { decodeCursor, encodeCursor, isIsoTime } from "./telemetry-cursor.ts";

const DEFAULT_RANGE_MS = 60 * 60 * 1000;

/**
 * Log records of an environment in a time range (default: the last hour), newest first, filtered
 * by service, minimum severity, body text and trace id, a page at a time.
 */
export async function searchLogs({ ctx, input }: EnvironmentRead<LogSearchQueryInput>): Promise<LogPage> {
  requirePermission(ctx, "telemetry:read");
  const environmentId = await callerEnvironment(ctx, input.environmentId);
  const toMs = input.to ? Date.parse(input.to) : ctx.deps.clock().getTime();
  const fromMs = input.from ? Date.parse(input.from) : toMs - DEFAULT_RANGE_MS;
  if (!(fromMs < toMs)) {
    throw new AppError("invalid_request", "from must be before to.", { parameter: "from" });
  }
  const before = decodeCursor(input.cursor, ([time, id]) =>
    isIsoTime(time) && typeof id === "number" && Number.isSafeInteger(id) ? { time, id } : undefined,
  );
  const rows = await ctx.deps.telemetry.store.searchLogs(environmentId, {
    // The caller's own text when given: it may carry microseconds a Date would drop.
    from: input.from ?? new Date(fromMs).toISOString(),
    to: input.to ?? new Date(toMs).toISOString(),
    serviceName: input.service,
    minSeverity: input.severity ? minSeverityNumber(input.severity) : undefined,
    text: input.q,
    traceId: input.traceId,
    before,
    limit: input.pageSize + 1,
  });
  const page = rows.slice(0, input.pageSize);
  const last = page.at(-1);
  return {
    items: page.map((row) => ({
      id: String(row.id),
      time: row.time,
      severity: severityName(row.severityNumber),
      severityNumber: row.severityNumber,
      severityText: row.severityText,
      body: row.body,
      service: row.serviceName,
      traceId: row.traceId,
      spanId: row.spanId,
      eventName: row.eventName,
      scope: row.scopeName,
      attributes: row.attributes,
    })),
    nextCursor: rows.length > input.pageSize && last ? encodeCursor([last.time, last.id]) : null,
  };
}
