/**
 * The CLI's documented exit codes (docs/cli.md). Scripts branch on these, so a code never
 * changes meaning.
 */
export const exitCodes = {
  ok: 0,
  other: 1,
  usage: 2,
  auth: 3,
  notFound: 4,
  conflict: 5,
  remote: 6,
  interrupted: 130,
} as const;

/**
 * A failure the CLI reports as `error: <code>: <detail>` plus an optional next step, then exits
 * with `exitCode`. `code` is the API's problem code, or a CLI-side one (`usage`, `no_api_key`,
 * `unreachable`, …).
 */
export class CliError extends Error {
  readonly code: string;
  readonly exitCode: number;
  readonly nextStep: string | undefined;
  /** Lines printed after the next step (request id, idempotency key to retry with). */
  readonly notes: string[];

  constructor(code: string, message: string, exitCode: number, nextStep?: string, notes: string[] = []) {
    super(message);
    this.name = "CliError";
    this.code = code;
    this.exitCode = exitCode;
    this.nextStep = nextStep;
    this.notes = notes;
  }
}

export const usageError = (message: string, nextStep?: string): CliError =>
  new CliError("usage", message, exitCodes.usage, nextStep);
