import type { Problem } from "./api-client.ts";
import { CliError, exitCodes } from "./cli-error.ts";

/** What the command was about, so a next step can name the exact command to run. */
export type HintContext = { environmentId?: string; connectionId?: string; revision?: number };

/** 401/403 → auth; 404 → not found; 409/412/428 and a reused key → conflict; remote_* and 502/504 → remote. */
export function exitCodeFor(problem: Problem): number {
  const { status, code } = problem;
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
