import { randomUUID } from "node:crypto";
import type { Command } from "commander";
import { type ApiClient, ApiError, type ApiRequest, createApiClient } from "./api-client.ts";
import { type HintContext, problemToCliError } from "./api-errors.ts";
import { CliError, usageError } from "./cli-error.ts";
import { json } from "./format.ts";
import { isRecord } from "./json.ts";
import { addClientOptions, type ClientFlags, resolveSettings } from "./settings.ts";
import { type Style, styleFor } from "./style.ts";

export type McpFlags = ClientFlags & { environment?: string; json?: boolean };
export type MutationFlags = McpFlags & { revision?: string; idempotencyKey?: string };

/** Everything an `environment mcp` command needs; the API client is made on first use. */
export type McpSession = {
  environmentId: string;
  connectionId: string | undefined;
  json: boolean;
  /** Style for stdout (colour only when stdout is a terminal). */
  style: Style;
  /** `/environments/<env>/mcp-connections[/<id>]` + suffix. */
  path(suffix?: string): string;
  request(request: ApiRequest): Promise<unknown>;
  /** `--revision` as the API wants it (a positive integer); remembered for next-step hints. */
  revision(flags: MutationFlags): number;
  /** The Idempotency-Key to send: the given one, or a fresh UUID that is reported. */
  idempotencyKey(flags: MutationFlags): string;
  print(text: string): void;
  info(text: string): void;
  /** `--json` output: the API's JSON, plus `idempotencyKey` when the CLI generated one. */
  printJson(value: unknown): void;
};

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const keyPattern = /^[\x21-\x7e]{1,200}$/;

/** The options every `environment mcp` command takes. */
export function addMcpOptions(command: Command): Command {
  return addClientOptions(
    command
      .option(
        "--environment <uuid>",
        "the environment's UUID (required; patchbay environment list shows them)",
      )
      .option("--json", "print the API's JSON instead of text"),
  );
}

export function addMutationOptions(command: Command): Command {
  return addMcpOptions(
    command
      .option(
        "--revision <n>",
        "the connection's revision from your latest read (required; sent as If-Match)",
      )
      .option("--idempotency-key <key>", "Idempotency-Key to send (default: a new UUID, reported)"),
  );
}

/**
 * `collection` (default `mcp-connections`) and `group` (default `mcp`) let other environment
 * resources (`environment repository …`) share the same options, errors and key handling.
 */
export function openMcpSession(
  flags: McpFlags,
  connectionId?: string,
  opts: { collection?: string; group?: string } = {},
): McpSession {
  const environmentId = flags.environment;
  if (environmentId === undefined || environmentId === "") {
    throw usageError(
      `--environment <uuid> is required on every environment ${opts.group ?? "mcp"} command`,
      "find the environment's id with: patchbay environment list",
    );
  }
  if (!uuid.test(environmentId)) throw usageError(`--environment must be a UUID (got "${environmentId}")`);
  let client: ApiClient | undefined;
  let generatedKey: string | undefined;
  let revision: number | undefined;
  const isJson = flags.json === true;
  const base = `/environments/${environmentId}/${opts.collection ?? "mcp-connections"}`;
  const session: McpSession = {
    environmentId,
    connectionId,
    json: isJson,
    style: styleFor(process.stdout),
    path: (suffix = "") => `${base}${connectionId ? `/${encodeURIComponent(connectionId)}` : ""}${suffix}`,
    async request(request) {
      client ??= createApiClient(resolveSettings(flags));
      try {
        return (await client.request(request)).body;
      } catch (error) {
        throw reportable(error, session, { environmentId, connectionId, revision }, generatedKey);
      }
    },
    revision(mutation) {
      revision = parseRevision(mutation);
      return revision;
    },
    idempotencyKey(mutation) {
      if (mutation.idempotencyKey !== undefined) {
        if (!keyPattern.test(mutation.idempotencyKey)) {
          throw usageError("--idempotency-key must be 1–200 visible ASCII characters");
        }
        return mutation.idempotencyKey;
      }
      if (generatedKey === undefined) {
        generatedKey = randomUUID();
        if (!isJson) session.info(`idempotency key: ${generatedKey} (generated)`);
      }
      return generatedKey;
    },
    print: (text) => process.stdout.write(text),
    info: (text) => process.stderr.write(`${text}\n`),
    printJson: (value) =>
      process.stdout.write(
        json(generatedKey && isRecord(value) ? { ...value, idempotencyKey: generatedKey } : value),
      ),
  };
  return session;
}

function parseRevision(flags: MutationFlags): number {
  if (flags.revision === undefined) {
    throw usageError("--revision <n> is required: the revision from your latest read (get or list shows it)");
  }
  if (!/^[1-9]\d{0,8}$/.test(flags.revision))
    throw usageError(`--revision must be a positive integer (got "${flags.revision}")`);
  return Number(flags.revision);
}

export const mutationHeaders = (key: string, revision: number): Record<string, string> => ({
  "idempotency-key": key,
  "if-match": `"${revision}"`,
});

/**
 * An API error with the next step for this command. In --json mode the problem body also goes
 * to stdout, for scripts. When the outcome is unknown (network failure, 5xx) the generated key
 * is named so a retry applies the change at most once.
 */
function reportable(
  error: unknown,
  session: McpSession,
  context: HintContext,
  generatedKey: string | undefined,
): unknown {
  const retryNote = generatedKey
    ? [`to retry safely, pass --idempotency-key ${generatedKey}: the change applies at most once`]
    : [];
  if (error instanceof ApiError) {
    if (session.json) session.printJson(error.problem);
    return problemToCliError(error.problem, context, error.problem.status >= 500 ? retryNote : []);
  }
  if (error instanceof CliError && (error.code === "unreachable" || error.code === "timeout")) {
    return new CliError(error.code, error.message, error.exitCode, error.nextStep, [
      ...error.notes,
      ...retryNote,
    ]);
  }
  return error;
}
