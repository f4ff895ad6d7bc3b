import { randomUUID } from "node:crypto";
import type { Command } from "commander";
import { ApiError, type ApiRequest, createApiClient } from "./api-client.ts";
import { type HintContext, problemToCliError } from "./api-errors.ts";
import { CliError, usageError } from "./cli-error.ts";
import { json } from "./format.ts";
import { isRecord } from "./json.ts";
import { toStderr } from "./profiles.ts";
import { addClientOptions, type ClientFlags, type ClientSettings, resolveSettings } from "./settings.ts";
import { type Style, styleFor } from "./style.ts";

export type SessionFlags = ClientFlags & {
  json?: boolean;
  environment?: string;
  revision?: string;
  idempotencyKey?: string;
};

export type Page<T> = { items: T[]; nextCursor: string | null };

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const keyPattern = /^[\x21-\x7e]{1,200}$/;
/** A safety stop for --all against a server whose cursors never end. */
const MAX_PAGES = 1000;

export const jsonHelp = "print the API's JSON instead of text";
export const idempotencyKeyHelp = "Idempotency-Key to send (default: a new UUID, reported)";

/** A repeatable option's values. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/**
 * The options every `environment <group>` command takes, after the command's own (help lists them
 * in the order added); a change of an existing connection also takes --revision and a key.
 */
export function addEnvironmentOptions(command: Command, change = false): Command {
  if (change) {
    command
      .option(
        "--revision <n>",
        "the connection's revision from your latest read (required; sent as If-Match)",
      )
      .option("--idempotency-key <key>", idempotencyKeyHelp);
  }
  return addClientOptions(
    command
      .option(
        "--environment <uuid>",
        "the environment's UUID (required; patchbay environment list shows them)",
      )
      .option("--json", jsonHelp),
  );
}

/** What a client command needs: the API (its client made on first use), output, and a change's keys. */
export function openSession(flags: SessionFlags, hint: HintContext = {}) {
  let settings: ClientSettings | undefined;
  let client: ReturnType<typeof createApiClient> | undefined;
  let generatedKey: string | undefined;
  const session = {
    json: flags.json === true,
    /** Style for stdout (colour only when stdout is a terminal). */
    style: styleFor(process.stdout),
    settings: (): ClientSettings => (settings ??= resolveSettings(flags)),
    async request(request: ApiRequest): Promise<unknown> {
      client ??= createApiClient(session.settings());
      try {
        return await client(request);
      } catch (error) {
        // In --json mode the problem body also goes to stdout, for scripts.
        if (error instanceof ApiError && session.json) session.printJson(error.problem);
        throw reportable(error, hint, generatedKey);
      }
    },
    /** `--revision` as the API wants it (a positive integer); remembered for next-step hints. */
    revision(): number {
      hint.revision = parseRevision(flags.revision);
      return hint.revision;
    },
    /** The Idempotency-Key to send: the given one, or a fresh UUID that is reported. */
    idempotencyKey(): string {
      if (flags.idempotencyKey !== undefined) {
        if (!keyPattern.test(flags.idempotencyKey)) {
          throw usageError("--idempotency-key must be 1–200 visible ASCII characters");
        }
        return flags.idempotencyKey;
      }
      if (generatedKey === undefined) {
        generatedKey = randomUUID();
        if (!session.json) session.info(`idempotency key: ${generatedKey} (generated)`);
      }
      return generatedKey;
    },
    /** Idempotency-Key (this command's unless given) and If-Match with `--revision`. */
    changeHeaders: (key: string = session.idempotencyKey()) => ({
      "idempotency-key": key,
      "if-match": `"${session.revision()}"`,
    }),
    print: (text: string): void => void process.stdout.write(text),
    info: toStderr,
    /** `--json` output: the API's JSON, plus `idempotencyKey` when the CLI generated one. */
    printJson: (value: unknown): void =>
      session.print(
        json(generatedKey && isRecord(value) ? { ...value, idempotencyKey: generatedKey } : value),
      ),
    /** `value` as JSON with --json, else `text`. */
    show: (value: unknown, text: string): void =>
      session.json ? session.printJson(value) : session.print(text),
  };
  return session;
}

type Session = ReturnType<typeof openSession>;

/** A session on one `environment <group>` resource (`/environments/<env>/<collection>`), or one item of it. */
export function openEnvironmentSession(
  flags: SessionFlags,
  resource: { group: string; collection: string },
  id?: string,
) {
  const environmentId = flags.environment;
  if (environmentId === undefined || environmentId === "") {
    throw usageError(
      `--environment <uuid> is required on every environment ${resource.group} command`,
      "find the environment's id with: patchbay environment list",
    );
  }
  if (!uuid.test(environmentId)) throw usageError(`--environment must be a UUID (got "${environmentId}")`);
  const base = `/environments/${environmentId}/${resource.collection}${id ? `/${encodeURIComponent(id)}` : ""}`;
  return {
    ...openSession(flags, { environmentId, connectionId: id }),
    environmentId,
    id,
    /** `/environments/<env>/<collection>[/<id>]` + suffix. */
    path: (suffix = "") => `${base}${suffix}`,
  };
}

export type EnvironmentSession = ReturnType<typeof openEnvironmentSession>;

/** One page from `cursor`, or with `all` every page from there as one. */
export async function readPages<T>(
  session: Session,
  path: string,
  query: { pageSize?: string; cursor?: string },
  all = false,
): Promise<Page<T>> {
  const read = async (cursor: string | undefined) =>
    (await session.request({ method: "GET", path, query: { ...query, cursor } })) as Page<T>;
  let page = await read(query.cursor);
  if (!all) return page;
  const items = [...page.items];
  for (let n = 1; page.nextCursor !== null && n < MAX_PAGES; n++) {
    page = await read(page.nextCursor);
    items.push(...page.items);
  }
  return { items, nextCursor: page.nextCursor };
}

/** `list` of an environment resource: an aligned table, or the API's page with --json. */
export function addListCommand<T>(
  parent: Command,
  resource: { group: string; collection: string },
  noun: string,
  description: string,
  render: (items: T[], style: Style) => string,
): void {
  type ListFlags = SessionFlags & { pageSize?: string; cursor?: string; all?: boolean };
  addEnvironmentOptions(
    parent
      .command("list")
      .description(description)
      .option("--page-size <n>", `${noun} per page, 1–200 (server default 50)`)
      .option("--cursor <cursor>", "continue from a previous page's nextCursor")
      .option("--all", "follow nextCursor until the last page"),
  ).action(async (flags: ListFlags) => {
    const session = openEnvironmentSession(flags, resource);
    const pageSize = parsePageSize(flags.pageSize);
    if (flags.all && flags.cursor !== undefined)
      throw usageError("--all starts at the first page; drop --cursor");
    const page = await readPages<T>(session, session.path(), { pageSize, cursor: flags.cursor }, flags.all);
    session.show(page, render(page.items, session.style));
    if (!session.json && page.nextCursor !== null) {
      session.info(`more ${noun}: --cursor ${page.nextCursor} (or --all)`);
    }
  });
}

function parsePageSize(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > 200) throw usageError(`--page-size must be 1–200 (got "${raw}")`);
  return String(n);
}

function parseRevision(raw: string | undefined): number {
  if (raw === undefined) {
    throw usageError("--revision <n> is required: the revision from your latest read (get or list shows it)");
  }
  if (!/^[1-9]\d{0,8}$/.test(raw)) throw usageError(`--revision must be a positive integer (got "${raw}")`);
  return Number(raw);
}

/**
 * An API error with the next step for this command. When the outcome is unknown (network failure,
 * 5xx) the generated key is named so a retry applies the change at most once.
 */
function reportable(error: unknown, hint: HintContext, generatedKey: string | undefined): unknown {
  const retryNote = generatedKey
    ? [`to retry safely, pass --idempotency-key ${generatedKey}: the change applies at most once`]
    : [];
  if (error instanceof ApiError) {
    return problemToCliError(error.problem, hint, error.problem.status >= 500 ? retryNote : []);
  }
  if (error instanceof CliError && (error.code === "unreachable" || error.code === "timeout")) {
    return new CliError(error.code, error.message, error.exitCode, error.nextStep, [
      ...error.notes,
      ...retryNote,
    ]);
  }
  return error;
}
