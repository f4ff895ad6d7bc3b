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
  switch (problem.code) {
    case "unauthorized":
      return "check the key: --api-key, PATCHBAY_API_KEY or the profile's (patchbay profile set --api-key-stdin)";
    case "forbidden":
      return typeof problem.requiredPermission === "string"
        ? `use a key of an owner or administrator with the permission ${problem.requiredPermission}`
        : "use a key of an owner or administrator of the organisation";
    case "insufficient_scope":
      return "log in again to get the new scopes, or use an API key with the permission";
    case "not_found":
      return context.connectionId
        ? `check the id and the environment: ${mcp("list")}`
        : "check the environment id: patchbay environment list";
    case "revision_conflict":
      return `read it again (${mcp(`get ${id}`)}) and retry with --revision ${revision}`;
    case "precondition_required":
      return `pass --revision with the revision from your latest read (${mcp(`get ${id}`)})`;
    case "connection_enabled":
      return `disable it first: ${mcp(`disable ${id}`)} ${rev}`;
    case "credential_required":
    case "remote_auth_failed":
      return `attach a working credential: ${mcp(`credential set ${id}`)} ${rev} --stdin`;
    case "credential_not_applicable":
      return "this connection authenticates with none; change --auth with update first if it needs a credential";
    case "approval_required":
    case "discovery_stale":
    case "manifest_changed":
      return `discover again and approve from the new discovery: ${mcp(`discover ${id}`)} ${rev}`;
    case "unknown_tool":
    case "tool_not_approvable":
      return `approve only tools the discovery lists as approvable (${mcp(`discover ${id}`)} shows them)`;
    case "limit_exceeded":
      return "disable another connection of the environment, or approve fewer tools";
    case "alias_taken":
      return `choose another --alias (${mcp("list")} shows the taken ones)`;
    case "receipt_invalid":
    case "receipt_required":
      return `run the delete again: it makes a fresh preview (${mcp(`delete ${id}`)} ${rev})`;
    case "idempotency_key_reused":
      return "use a new --idempotency-key for a different request (or leave it out to get a fresh one)";
    case "idempotency_in_flight":
      return "the first request with this key is still running; retry shortly with the same --idempotency-key";
    case "invalid_endpoint_url":
      return "fix --endpoint-url: public https on port 443, no query, fragment or credentials";
    case "egress_blocked":
      return "the endpoint must be a public HTTPS server that answers without redirects";
    case "discovery_limit_exceeded":
      return "reduce the remote server's tool catalog";
    case "remote_unreachable":
    case "remote_timeout":
      return "check that the remote MCP server is up and reachable from patchbay, then retry";
    case "service_taken":
    case "repository_taken":
      return `remove the other registration first (patchbay environment repository list${env} shows it)`;
    case "repository_in_use":
      return "cancel the remediation that works on it, or wait until it finishes";
    case "invalid_repository_path":
    case "invalid_repository":
      return "give the absolute path of a git work tree's top level whose --default-branch exists";
    case "provider_unavailable":
      return "the server does not offer this provider; ask its operator (see docs/remediation.md)";
    case "rate_limited":
    case "overloaded":
      return "wait a little and retry";
    default:
      return undefined;
  }
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
