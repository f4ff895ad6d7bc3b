import { createHash, randomUUID } from "node:crypto";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import canonicalize from "canonicalize";
import { z } from "zod";
import type { MemberActor } from "../../actor.ts";
import type { ServiceContext } from "../../context.ts";
import { AppError } from "../../errors.ts";
import {
  claimIdempotencyKey,
  idempotencyKeyPattern,
  idempotencyScope,
  releasingOnThrow,
} from "../../platform/db/claim.ts";
import { asKnownError } from "../../platform/db/errors.ts";
import { containsLoneSurrogate, containsNul } from "../http/unstorable-text.ts";
import { callerOf } from "./caller.ts";
import { appErrorResult, internalErrorResult, type NextStep } from "./tool-errors.ts";

/** What a tool's `run` returns: a concise line for the model and the structured result. */
export type ToolAnswer<O> = { text: string; data: O };

type Shape = z.ZodRawShape;

export type ToolSpec<I extends Shape, O extends Shape> = {
  name: string;
  title: string;
  description: string;
  /**
   * `read` tools need read access; `write` tools need write access and run under an
   * idempotency key (the kit adds the `idempotencyKey` argument and reports it).
   */
  access: "read" | "write";
  input: I;
  output: O;
  annotations: Omit<ToolAnnotations, "title">;
  nextStep?: NextStep;
  run(input: z.output<z.ZodObject<I>>, ctx: ServiceContext): Promise<ToolAnswer<z.output<z.ZodObject<O>>>>;
};

/** A tool with its types erased, ready to be registered on the shared servers. */
export type RegistrableTool = {
  name: string;
  access: "read" | "write";
  /**
   * Registers the tool once per server, for every caller that server will serve: each call finds
   * its own caller in the request's `extra` (caller.ts), never in the registration.
   */
  register(server: McpServer): void;
};

const idempotencyKeyArg = z
  .string()
  .regex(idempotencyKeyPattern, "must be 1–255 visible ASCII characters")
  .optional()
  .describe(
    "Unique per intended change (e.g. a UUID); repeating a call with the same key and arguments returns the first result instead of acting twice. Kept 24 h. Generated and reported when omitted.",
  );
const keyOnly = z.object({ idempotencyKey: idempotencyKeyArg });
const storedAnswer = z.object({ text: z.string(), data: z.record(z.string(), z.unknown()) });

export function defineTool<I extends Shape, O extends Shape>(spec: ToolSpec<I, O>): RegistrableTool {
  const write = spec.access === "write";
  const input = z.object(spec.input);
  const output = z.object(spec.output);
  // Strict: an argument a tool does not declare (a credential, say) is refused, not dropped.
  const declaredInput = z.strictObject(
    write ? { ...spec.input, idempotencyKey: idempotencyKeyArg } : spec.input,
  );
  const declaredOutput = write
    ? output.extend({
        idempotencyKey: z.string().describe("The key this change ran under (yours, or generated)."),
        replayed: z.boolean().describe("True when this is the stored result of an earlier identical call."),
      })
    : output;

  async function call(ctx: ServiceContext<MemberActor>, args: unknown): Promise<CallToolResult> {
    try {
      if (write) requireWriteAccess(ctx.actor);
      // Same rule as REST (unstorable-text.ts): PostgreSQL text cannot hold U+0000.
      if (containsNul(args))
        throw new AppError("invalid_request", "Arguments must not contain NUL characters.");
      if (containsLoneSurrogate(args))
        throw new AppError(
          "invalid_request",
          "Arguments must be valid Unicode: a string holds a lone surrogate.",
        );
      // The SDK validated `args` against `declaredInput`; parsing again types them for `run`.
      const parsed = input.parse(args);
      if (!write) {
        const answer = await spec.run(parsed, ctx);
        return success(answer.text, answer.data);
      }
      const key = keyOnly.parse(args).idempotencyKey ?? randomUUID();
      return await idempotently(ctx, key, requestHash(spec.name, parsed), async () => {
        const answer = await spec.run(parsed, { ...ctx, idempotencyKey: key });
        return { text: answer.text, data: output.parse(answer.data) };
      });
    } catch (thrown) {
      const error = asKnownError(thrown);
      if (error) return appErrorResult(error, ctx.requestId, spec.nextStep);
      ctx.deps.logger.error({ err: thrown, requestId: ctx.requestId, tool: spec.name }, "MCP tool failed");
      return internalErrorResult(ctx.requestId);
    }
  }

  return {
    name: spec.name,
    access: spec.access,
    register(server) {
      server.registerTool(
        spec.name,
        {
          title: spec.title,
          description: spec.description,
          inputSchema: declaredInput,
          outputSchema: declaredOutput,
          annotations: { title: spec.title, ...spec.annotations },
        },
        (args: unknown, extra) => call(callerOf(extra), args),
      );
    },
  };
}

/**
 * Write tools need write access (`mcp_connections:manage`); read access is checked once per
 * request, before any tool runs (routes.ts). An OAuth token short of it is `insufficient_scope`
 * (log in again and grant the scope); an API key is `forbidden`.
 */
function requireWriteAccess(actor: MemberActor): void {
  if (actor.permissions.has("mcp_connections:manage")) return;
  if (actor.oauth) {
    throw new AppError(
      "insufficient_scope",
      "This access token may only read: the tool needs the scope patchbay.mcp.write. Reconnect and grant it.",
      { scope: "patchbay.mcp.write", requiredPermission: "mcp_connections:manage" },
    );
  }
  throw new AppError(
    "forbidden",
    "This credential may only read: the tool needs mcp_connections:manage (OAuth scope patchbay.mcp.write).",
    { requiredPermission: "mcp_connections:manage", requiredScope: "patchbay.mcp.write" },
  );
}

/**
 * The REST Idempotency-Key semantics for a tool call, through the same store: same key and
 * same call → the stored result (`replayed: true`); same key and another call (or a REST
 * request) → `idempotency_key_reused`; failures release the key. Keys share the
 * organisation's namespace with REST, so one key never means two changes.
 */
async function idempotently(
  ctx: ServiceContext,
  key: string,
  hash: string,
  run: () => Promise<ToolAnswer<Record<string, unknown>>>,
): Promise<CallToolResult> {
  const held = await claimIdempotencyKey(idempotencyScope(ctx, key), hash, ctx.deps.clock);
  if ("replay" in held) return mutationResult(storedAnswer.parse(JSON.parse(held.replay.body)), key, true);
  const answer = await releasingOnThrow(held.claim.release, run);
  await held.claim.complete({
    status: 200,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(answer),
  });
  return mutationResult(answer, key, false);
}

/** Tool name and canonical (RFC 8785) arguments, in a namespace no HTTP request hash can share. */
function requestHash(tool: string, args: unknown): string {
  return createHash("sha256")
    .update(`mcp:tools/call\n${tool}\n${canonicalize(args) ?? ""}`)
    .digest("hex");
}

function success(text: string, data: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text }], structuredContent: data };
}

function mutationResult(
  answer: ToolAnswer<Record<string, unknown>>,
  key: string,
  replayed: boolean,
): CallToolResult {
  const note = replayed ? `idempotencyKey ${key}, replayed` : `idempotencyKey ${key}`;
  return success(`${answer.text} (${note})`, { ...answer.data, idempotencyKey: key, replayed });
}
