import type { DestinationStream, Logger, LoggerOptions } from "pino";
import { pino } from "pino";
import { errorMessage, serializeError } from "./logged-errors.ts";

export type { Logger };

/** Keys redacted at the top level and one level down. */
const redactedKeys = ["authorization", "apiKey", "secret", "credential", "token", "password", "value", "kek"];

/**
 * Paths redacted wherever they appear. Request logging never records headers or bodies in
 * the first place; this list is the second wall for anything a verb logs by mistake.
 */
const redactPaths = [
  ...redactedKeys.flatMap((key) => [key, `*.${key}`]),
  "headers.authorization",
  "*.headers.authorization",
];

export function createLogger(opts: {
  level: string;
  pretty?: boolean;
  destination?: DestinationStream;
}): Logger {
  const base: LoggerOptions = {
    level: opts.level,
    redact: { paths: redactPaths, censor: "[redacted]" },
    serializers: { err: serializeError, error: serializeError },
    hooks: {
      // `logger.error(err)` without a message: pino would copy the error's message into `msg`,
      // where no serializer looks.
      logMethod(args, method) {
        const [first, second] = args;
        if (first instanceof Error && typeof second !== "string") {
          return method.apply(this, [first, errorMessage(first), ...args.slice(1)]);
        }
        return method.apply(this, args);
      },
    },
    base: undefined,
  };
  if (opts.destination) return pino(base, opts.destination);
  if (opts.pretty) {
    return pino({
      ...base,
      transport: { target: "pino-pretty", options: { translateTime: "SYS:HH:MM:ss" } },
    });
  }
  // Synchronous stdout on purpose: an asynchronous destination (`sync: false`) measured no gain
  // (docs/performance.md), and it can lose the last lines when the process dies hard.
  return pino(base);
}
