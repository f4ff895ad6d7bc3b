/** OpenTelemetry severity ranges: each name covers four numbers (TRACE 1–4 … FATAL 21–24). */
export const severityNames = ["trace", "debug", "info", "warn", "error", "fatal"] as const;
export type SeverityName = (typeof severityNames)[number];

/** The lowest severity number of a named range. */
export const minSeverityNumber = (name: SeverityName): number => severityNames.indexOf(name) * 4 + 1;

export const severityName = (number: number): SeverityName | "unspecified" =>
  number < 1 ? "unspecified" : (severityNames[Math.min(5, Math.floor((number - 1) / 4))] ?? "fatal");
