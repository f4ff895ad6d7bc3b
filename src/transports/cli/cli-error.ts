import { CommanderError } from "commander";
import { ConfigError, EX_CONFIG } from "../../config-error.ts";
import { styleFor } from "./format.ts";

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

/** A request that got no answer; a timeout is told apart only when `timeoutMs` is given. */
export function networkError(baseUrl: string, error: unknown, nextStep: string, timeoutMs?: number) {
  if (timeoutMs !== undefined && error instanceof DOMException && error.name === "TimeoutError") {
    const detail = `patchbay at ${baseUrl} did not answer within ${timeoutMs / 1000} s`;
    return new CliError("timeout", detail, exitCodes.other, nextStep);
  }
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
  return new CliError(
    "unreachable",
    `cannot reach patchbay at ${baseUrl}: ${cause}`,
    exitCodes.other,
    nextStep,
  );
}

/**
 * Ends the process for a failed command with its documented exit code (docs/cli.md). A `CliError`
 * is reported on stderr as `error: <code>: <detail>`, then the next step and any notes.
 */
export function exitFor(error: unknown): never {
  // Help and --version exit 0; every other parse failure is a usage error.
  if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? 0 : exitCodes.usage);
  if (error instanceof CliError) {
    const style = styleFor(process.stderr);
    const lines = [`${style.red(style.bold("error:"))} ${error.code}: ${error.message}`];
    if (error.nextStep) lines.push(`${style.bold("next step:")} ${error.nextStep}`);
    for (const note of error.notes) lines.push(style.dim(note));
    process.stderr.write(`${lines.join("\n")}\n`);
    process.exit(error.exitCode);
  }
  if (error instanceof ConfigError) {
    process.stderr.write(`patchbay: invalid configuration: ${error.message}\n`);
    process.exit(EX_CONFIG);
  }
  process.stderr.write(`patchbay: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}

/** An RFC 9457 body as the API sends it (docs/api-conventions.md); extra fields depend on `code`. */
export type Problem = {
  code: string;
  status: number;
  detail?: string;
  requestId?: string;
  [extra: string]: unknown;
};

/** What the command was about, so a next step can name the exact command to run. */
export type HintContext = { environmentId?: string; connectionId?: string; revision?: number };

/** 401/403 → auth; 404 → not found; 409/412/428 and a reused key → conflict; remote_* and 502/504 → remote. */
export function exitCodeFor({ status, code }: Problem): number {
  if (status === 401 || status === 403) return exitCodes.auth;
  if (status === 404) return exitCodes.notFound;
  if (code.startsWith("remote_") || status === 502 || status === 504) return exitCodes.remote;
  if (status === 409 || status === 412 || status === 428 || code === "idempotency_key_reused") {
    return exitCodes.conflict;
  }
  return exitCodes.other;
}
/** The next step for a problem, as a command where one exists. */
export function nextStepFor(problem: Problem, context: HintContext): string | undefined {
  const env = context.environmentId ? ` --environment ${context.environmentId}` : "";
  const id = context.connectionId ?? "<connection id>";
  const mcp = (rest: string) => `patchbay environment mcp ${rest}${env}`;
  const revision =
    typeof problem.currentRevision === "number" ? String(problem.currentRevision) : "<revision>";
  // Past the 412 check the caller's revision is the current one, so later steps can reuse it.
  const rev = `--revision ${context.revision ?? "<revision>"}`;
  const credential = `attach a working credential: ${mcp(`credential set ${id}`)} ${rev} --stdin`;
  const rediscover = `discover again and approve from the new discovery: ${mcp(`discover ${id}`)} ${rev}`;
  const approvable = `approve only tools the discovery lists as approvable (${mcp(`discover ${id}`)} shows them)`;
  const receipt = `run the delete again: it makes a fresh preview (${mcp(`delete ${id}`)} ${rev})`;
  const remote = "check that the remote MCP server is up and reachable from patchbay, then retry";
  const taken = `remove the other registration first (patchbay environment repository list${env} shows it)`;
  const repository = "give the absolute path of a git work tree's top level whose --default-branch exists";
  const steps: Record<string, string> = {
    unauthorized:
      "check the key: --api-key, PATCHBAY_API_KEY or the profile's (patchbay profile set --api-key-stdin)",
    forbidden:
      typeof problem.requiredPermission === "string"
        ? `use a key of an owner or administrator with the permission ${problem.requiredPermission}`
        : "use a key of an owner or administrator of the organisation",
    insufficient_scope: "log in again to get the new scopes, or use an API key with the permission",
    not_found: context.connectionId
      ? `check the id and the environment: ${mcp("list")}`
      : "check the environment id: patchbay environment list",
    revision_conflict: `read it again (${mcp(`get ${id}`)}) and retry with --revision ${revision}`,
    precondition_required: `pass --revision with the revision from your latest read (${mcp(`get ${id}`)})`,
    connection_enabled: `disable it first: ${mcp(`disable ${id}`)} ${rev}`,
    credential_required: credential,
    remote_auth_failed: credential,
    credential_not_applicable:
      "this connection authenticates with none; change --auth with update first if it needs a credential",
    approval_required: rediscover,
    discovery_stale: rediscover,
    manifest_changed: rediscover,
    unknown_tool: approvable,
    tool_not_approvable: approvable,
    limit_exceeded: "disable another connection of the environment, or approve fewer tools",
    alias_taken: `choose another --alias (${mcp("list")} shows the taken ones)`,
    receipt_invalid: receipt,
    receipt_required: receipt,
    idempotency_key_reused:
      "use a new --idempotency-key for a different request (or leave it out to get a fresh one)",
    idempotency_in_flight:
      "the first request with this key is still running; retry shortly with the same --idempotency-key",
    invalid_endpoint_url: "fix --endpoint-url: public https on port 443, no query, fragment or credentials",
    egress_blocked: "the endpoint must be a public HTTPS server that answers without redirects",
    discovery_limit_exceeded: "reduce the remote server's tool catalog",
    remote_unreachable: remote,
    remote_timeout: remote,
    service_taken: taken,
    repository_taken: taken,
    repository_in_use: "cancel the remediation that works on it, or wait until it finishes",
    invalid_repository_path: repository,
    invalid_repository: repository,
    provider_unavailable:
      "the server does not offer this provider; ask its operator (see docs/remediation.md)",
    rate_limited: "wait a little and retry",
    overloaded: "wait a little and retry",
  };
  return Object.hasOwn(steps, problem.code) ? steps[problem.code] : undefined;
}

/** An API problem as the CLI reports it. */
export function problemToCliError(problem: Problem, context: HintContext, notes: string[] = []): CliError {
  const requestNote =
    problem.status >= 500 && problem.requestId
      ? [`request id: ${problem.requestId} (quote it to support)`]
      : [];
  return new CliError(
    problem.code,
    problem.detail ?? `HTTP ${problem.status}`,
    exitCodeFor(problem),
    nextStepFor(problem, context),
    [...requestNote, ...notes],
  );
}
