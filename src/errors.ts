/**
 * The one error type. Verbs throw `AppError(code)`; each transport maps it once
 * (HTTP → problem+json, MCP → isError result, CLI → message + exit code).
 * Codes are a closed union so a code never silently changes meaning.
 */
export const errorStatus = {
  invalid_request: 400,
  idempotency_key_required: 400,
  receipt_required: 400,
  invalid_assumed_state: 400,
  invalid_repository_name: 400,
  invalid_webhook_url: 400,
  unknown_event_type: 400,
  unauthorized: 401,
  sign_in_invalid: 401,
  payment_required: 402,
  payment_invalid: 402,
  payment_failed: 402,
  sign_in_required: 402,
  forbidden: 403,
  csrf_rejected: 403,
  insufficient_scope: 403,
  write_not_permitted: 403,
  not_found: 404,
  method_not_allowed: 405,
  idempotency_in_flight: 409,
  connection_enabled: 409,
  credential_required: 409,
  credential_not_applicable: 409,
  approval_required: 409,
  discovery_stale: 409,
  manifest_changed: 409,
  limit_exceeded: 409,
  receipt_invalid: 409,
  stale_assumed_state: 409,
  already_signed_up: 409,
  signup_required: 409,
  conflict: 409,
  already_member: 409,
  last_owner: 409,
  name_taken: 409,
  alias_taken: 409,
  connection_changed: 409,
  snapshot_limit_exceeded: 422,
  task_not_cancellable: 409,
  task_not_running: 409,
  service_taken: 409,
  repository_taken: 409,
  repository_in_use: 409,
  installation_required: 409,
  remediation_not_cancellable: 409,
  approval_not_pending: 409,
  call_rejected: 409,
  approval_wait_ended: 409,
  remediation_in_progress: 409,
  telemetry_required: 409,
  nothing_to_resolve: 409,
  payment_in_flight: 409,
  upload_used: 409,
  delivery_pending: 409,
  webhook_endpoint_disabled: 409,
  invitation_invalid: 410,
  authorization_expired: 410,
  revision_conflict: 412,
  upload_expired: 410,
  approval_expired: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  invalid_endpoint_url: 422,
  idempotency_key_reused: 422,
  unknown_tool: 422,
  tool_not_approvable: 422,
  discovery_limit_exceeded: 422,
  remote_auth_failed: 422,
  payment_reused: 422,
  egress_blocked: 422,
  invalid_repository_path: 422,
  invalid_repository: 422,
  problem_not_remediable: 422,
  invalid_webhook_signature: 401,
  precondition_required: 428,
  rate_limited: 429,
  internal: 500,
  remote_unreachable: 502,
  service_unavailable: 503,
  overloaded: 503,
  database_unavailable: 503,
  model_not_configured: 503,
  payments_unavailable: 503,
  provider_unavailable: 503,
  sandbox_unavailable: 503,
  remote_timeout: 504,
} as const;

export type ErrorCode = keyof typeof errorStatus;

/** A problem document's own members (http/problem.ts): a detail of one of these names would be lost. */
type ProblemMember = "type" | "title" | "status" | "detail" | "code" | "requestId";

/**
 * Extra, client-safe fields that travel with the error (e.g. `currentRevision`, `limit`). The
 * problem document's own members are refused by the type: a run's status is `remediationStatus`.
 */
export type ErrorDetails = Record<string, unknown> & { [K in ProblemMember]?: never };

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails | undefined;

  constructor(code: ErrorCode, message: string, details?: ErrorDetails) {
    super(message);
    this.name = "AppError";
    this.code = code;
    this.details = details;
  }

  get status(): number {
    return errorStatus[this.code];
  }
}

export const isAppError = (error: unknown): error is AppError => error instanceof AppError;
