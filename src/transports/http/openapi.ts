import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { ZodType } from "zod";
import type { AppEnv } from "./env.ts";
import { invalidRequest } from "./validation-error.ts";

/** A router whose validation failures become `invalid_request` problems, like every other error. */
export function createApiRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (result.success) return;
      throw invalidRequest(result.error.issues, result.target === "json" ? "body" : result.target);
    },
  });
}

export const ProblemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.string(),
    requestId: z.string(),
  })
  .catchall(z.unknown())
  .openapi("Problem", {
    description: "RFC 9457 problem details. `code` is stable; extra fields depend on the code.",
    example: {
      type: "urn:patchbay:error:revision_conflict",
      title: "Precondition Failed",
      status: 412,
      detail: "The resource changed since you read it; read it again and retry with the current revision.",
      code: "revision_conflict",
      requestId: "req_5y0qj1h8m3x2v4n6b7c9d0fz",
      currentRevision: 4,
    },
  });

const problemDescriptions: Record<number, string> = {
  400: "Malformed request (`invalid_request`, `idempotency_key_required`, …).",
  401: "Missing, unknown or revoked credential (`unauthorized`).",
  403: "Missing permission or role (`forbidden`, `insufficient_scope`).",
  404: "No such resource in your organisation (`not_found`).",
  409: "Conflicts with the resource's state (`idempotency_in_flight`, …).",
  412: "`If-Match` revision is stale (`revision_conflict`).",
  413: "Body too large (`payload_too_large`).",
  415: "Body is not JSON (`unsupported_media_type`).",
  422: "Semantically invalid (`idempotency_key_reused`, …).",
  428: "`If-Match` is required (`precondition_required`).",
  503: "Not available in this configuration (`model_not_configured`, …).",
  502: "The remote server could not be reached (`remote_unreachable`).",
  504: "The remote server did not answer in time (`remote_timeout`).",
};

/** Problem responses for the given statuses, for a route's `responses`. */
export function problemResponses(...statuses: number[]) {
  const out: Record<
    number,
    { description: string; content: { "application/problem+json": { schema: typeof ProblemSchema } } }
  > = {};
  for (const status of [400, 401, 403, 404, ...statuses]) {
    out[status] = {
      description: problemDescriptions[status] ?? "Error",
      content: { "application/problem+json": { schema: ProblemSchema } },
    };
  }
  return out;
}

export const jsonBody = <T extends ZodType>(schema: T, description?: string) => ({
  required: true,
  description,
  content: { "application/json": { schema } },
});

export const jsonResponse = <T extends ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

const etagHeaders = z.object({
  ETag: z
    .string()
    .openapi({ description: "The resource revision, quoted: send it back in `If-Match`.", example: '"3"' }),
});

/** A JSON response that also carries `ETag: "<revision>"`. */
export const revisionedResponse = <T extends ZodType>(schema: T, description: string) => ({
  ...jsonResponse(schema, description),
  headers: etagHeaders,
});

/**
 * Header parameters enforced by middleware (so their errors carry DESIGN's codes rather than a
 * generic validation failure) and declared here for the OpenAPI document.
 */
export const idempotencyKeyParam = {
  name: "Idempotency-Key",
  in: "header" as const,
  required: true,
  description: "Unique per intended change. Replays return the stored response; kept 24 h.",
  schema: { type: "string" as const, maxLength: 255 },
  example: "5b7e9a0c-3f1d-4c2e-9a8b-7d6e5f4a3b2c",
};

export const ifMatchParam = {
  name: "If-Match",
  in: "header" as const,
  required: true,
  description: 'The revision from your latest read, quoted, e.g. `"3"`.',
  schema: { type: "string" as const },
  example: '"3"',
};

export const page = <T extends ZodType>(item: T, name: string) =>
  z
    .object({
      items: z.array(item),
      nextCursor: z
        .string()
        .nullable()
        .openapi({ description: "Pass as `cursor` for the next page; null at the end." }),
    })
    .openapi(name);
