import type { Command } from "commander";
import { version } from "../../version.ts";
import {
  CliError,
  exitCodes,
  type HintContext,
  networkError,
  type Problem,
  problemToCliError,
  usageError,
} from "./cli-error.ts";
import { isRecord, json, parseJson, type Style, styleFor } from "./format.ts";
import { exchange } from "./http-exchange.ts";
import { accessTokenFor } from "./oauth.ts";
import {
  addClientOptions,
  type ClientFlags,
  type ClientSettings,
  resolveSettings,
  toStderr,
} from "./profiles.ts";

export type SessionFlags = ClientFlags & {
  json?: boolean;
  environment?: string;
  revision?: string;
  idempotencyKey?: string;
};

export type Page<T> = { items: T[]; nextCursor: string | null };

type ApiRequest = {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Below `/api/v1`, e.g. `/me`. */
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
};

/** Discovery and credential checks wait on the remote server; the server bounds those itself. */
const TIMEOUT_MS = 120_000;
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const keyPattern = /^[\x21-\x7e]{1,200}$/;
/** A safety stop for --all against a server whose cursors never end. */
const MAX_PAGES = 1000;

export const jsonHelp = "print the API's JSON instead of text";
export const idempotencyKeyHelp = "Idempotency-Key to send (default: a new UUID, reported)";

/** A repeatable option's values. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/**
 * A request to `/api/v1`: the answer's JSON body, or the problem of an error status; no answer at
 * all is a `CliError`. With a login (OAuth) credential the access token is refreshed transparently:
 * before a request when it is about to expire, and once more if the API answers 401 anyway.
 */
async function callApi(
  { baseUrl, credential, profile }: ClientSettings,
  request: ApiRequest,
): Promise<{ body: unknown } | { problem: Problem }> {
  const bearer = (force = false) =>
    credential.kind === "api_key"
      ? credential.key
      : accessTokenFor(credential.path, profile, credential.session, { force });
  const url = new URL(`${baseUrl}/api/v1${request.path}`);
  for (const [name, value] of Object.entries(request.query ?? {})) {
    if (value !== undefined) url.searchParams.set(name, value);
  }
  const hasBody = request.body !== undefined;
  const send = (token: string) =>
    exchange(url, {
      method: request.method,
      headers: {
        accept: "application/json, application/problem+json",
        authorization: `Bearer ${token}`,
        "user-agent": `patchbay-cli/${version}`,
        ...request.headers,
        ...(hasBody ? { "content-type": "application/json" } : {}),
      },
      ...(hasBody ? { body: JSON.stringify(request.body) } : {}),
      timeoutMs: TIMEOUT_MS,
    }).catch((error: unknown) => {
      const check =
        "check that the server is running and --base-url (or the profile's base URL) points at it";
      throw networkError(baseUrl, error, check, TIMEOUT_MS);
    });
  let res = await send(await bearer());
  if (res.status === 401 && credential.kind === "oauth") {
    // Expired early, or revoked: one refresh (which forgets a login the server ended), one retry.
    res = await send(await bearer(true));
  }
  const text = res.text;
  const body = parseJson(text);
  if (res.status >= 200 && res.status < 300) {
    if (text !== "" && body === undefined) {
      throw new CliError(
        "bad_response",
        `${url.pathname} answered with a body that is not JSON`,
        exitCodes.other,
      );
    }
    return { body };
  }
  if (isRecord(body) && typeof body.code === "string") {
    return { problem: { ...body, code: body.code, status: res.status } };
  }
  // Not our problem+json (a proxy, a redirect, an older server): keep what can be said.
  const where = res.status >= 300 && res.status < 400 ? ` to ${res.headers.location ?? "?"}` : "";
  return {
    problem: { code: `http_${res.status}`, status: res.status, detail: `HTTP ${res.status}${where}` },
  };
}

/**
 * What a client command needs: the API (its settings resolved on first use), output, and a
 * change's keys. `settings` is given only by `login`, which has its credential in hand.
 */
export function openSession(flags: SessionFlags, hint: HintContext = {}, settings?: ClientSettings) {
  let generatedKey: string | undefined;
  const session = {
    json: flags.json === true,
    /** Style for stdout (colour only when stdout is a terminal). */
    style: styleFor(process.stdout),
    settings: (): ClientSettings => (settings ??= resolveSettings(flags)),
    async request(request: ApiRequest): Promise<unknown> {
      // When the outcome is unknown (no answer, 5xx) the generated key is named, so a retry
      // applies the change at most once.
      const retryNote = generatedKey
        ? [`to retry safely, pass --idempotency-key ${generatedKey}: the change applies at most once`]
        : [];
      const answer = await callApi(session.settings(), request).catch((error: unknown) => {
        if (error instanceof CliError && (error.code === "unreachable" || error.code === "timeout")) {
          error.notes.push(...retryNote);
        }
        throw error;
      });
      if ("body" in answer) return answer.body;
      // In --json mode the problem body also goes to stdout, for scripts.
      if (session.json) session.printJson(answer.problem);
      throw problemToCliError(answer.problem, hint, answer.problem.status >= 500 ? retryNote : []);
    },
    /** `--revision` as the API wants it (a positive integer); remembered for next-step hints. */
    revision(): number {
      const raw = flags.revision;
      if (raw === undefined) {
        throw usageError(
          "--revision <n> is required: the revision from your latest read (get or list shows it)",
        );
      }
      if (!/^[1-9]\d{0,8}$/.test(raw))
        throw usageError(`--revision must be a positive integer (got "${raw}")`);
      hint.revision = Number(raw);
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
        generatedKey = globalThis.crypto.randomUUID();
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

/** One page from `cursor`, or with `all` every page from there as one. */
export async function readPages<T>(
  session: ReturnType<typeof openSession>,
  path: string,
  query: { pageSize?: string | undefined; cursor?: string | undefined; [filter: string]: string | undefined },
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

/** An `environment <group>` collection (`/environments/<env>/<collection>`) and its items' argument. */
export type Resource = {
  group: string;
  collection: string;
  item: [name: string, example: string];
  /** Items also named by this field (a connection's alias), when the argument lacks `idPrefix`. */
  aliasField?: string;
  idPrefix?: string;
};

/**
 * The environment a command acts on: --environment (a UUID or a name), else the profile's
 * (`patchbay environment use`). A name is looked up among the organisation's environments.
 */
export async function resolveEnvironment(
  session: ReturnType<typeof openSession>,
  flag: string | undefined,
  groupHint: string,
): Promise<{ id: string; name: string | undefined }> {
  if (flag === undefined || flag === "") {
    const remembered = session.settings().environment;
    if (remembered) return remembered;
    throw usageError(
      `--environment <uuid or name> is required on every ${groupHint} command (or remember one: patchbay environment use <name>)`,
      "find the environment's id or name with: patchbay environment list",
    );
  }
  if (uuid.test(flag)) return { id: flag, name: undefined };
  const page = await readPages<{ id: string; name: string }>(
    session,
    "/environments",
    { pageSize: "200" },
    true,
  );
  const found = page.items.find((e) => e.name === flag);
  if (!found) {
    throw new CliError(
      "not_found",
      `there is no environment named "${flag}" in your organisation`,
      exitCodes.notFound,
      "see them with: patchbay environment list",
    );
  }
  return found;
}

async function openEnvironmentSession(flags: SessionFlags, resource: Resource, given: string | undefined) {
  const probe = openSession(flags);
  const environment = await resolveEnvironment(probe, flags.environment, `environment ${resource.group}`);
  const environmentId = environment.id;
  const collectionPath = `/environments/${environmentId}/${resource.collection}`;
  const id = given === undefined ? undefined : await resolveItem(probe, resource, collectionPath, given);
  // Said on stderr, so --json output stays the API's.
  probe.info(`environment: ${environment.name ? `${environment.name} (${environmentId})` : environmentId}`);
  const base = `${collectionPath}${id ? `/${encodeURIComponent(id)}` : ""}`;
  return {
    ...openSession(flags, { environmentId, connectionId: id }, probe.settings()),
    environmentId,
    id,
    /** `/environments/<env>/<collection>[/<id>]` + suffix. */
    path: (suffix = "") => `${base}${suffix}`,
  };
}

/** An item's id; for connections an alias is accepted too and looked up in the environment. */
async function resolveItem(
  session: ReturnType<typeof openSession>,
  resource: Resource,
  collectionPath: string,
  given: string,
): Promise<string> {
  const prefix = resource.idPrefix;
  if (!resource.aliasField || (prefix !== undefined && given.startsWith(prefix))) return given;
  const field = resource.aliasField;
  const page = await readPages<Record<string, unknown>>(session, collectionPath, { pageSize: "200" }, true);
  const found = page.items.find((item) => item[field] === given);
  return typeof found?.id === "string" ? found.id : given;
}

export type EnvironmentSession = Awaited<ReturnType<typeof openEnvironmentSession>>;

/** An option of a command: flags, help, and for a repeatable one its parser and initial value. */
export type OptionSpec = [flags: string, description: string, parse?: typeof collect, initial?: string[]];

export type CommandSpec<F> = {
  name: string;
  description: string;
  /** Takes the item's id as its argument. */
  item?: boolean;
  /** Changes an existing item: takes --revision and a key. */
  change?: boolean;
  options?: OptionSpec[];
  run: (session: EnvironmentSession, flags: F) => Promise<void>;
};

/**
 * One `environment <group>` command. Help lists the command's own options, then --revision and a
 * key for a change, then the options every such command takes.
 */
function addEnvironmentCommand<F extends SessionFlags>(
  parent: Command,
  resource: Resource,
  spec: CommandSpec<F>,
): void {
  const command = parent.command(spec.name).description(spec.description);
  if (spec.item) command.argument(...resource.item);
  for (const [flags, description, parse, initial] of spec.options ?? []) {
    if (parse) command.option(flags, description, parse, initial);
    else command.option(flags, description);
  }
  if (spec.change) {
    command
      .option(
        "--revision <n>",
        "the connection's revision from your latest read (required; sent as If-Match)",
      )
      .option("--idempotency-key <key>", idempotencyKeyHelp);
  }
  command
    .option(
      "--environment <uuid-or-name>",
      "the environment's UUID or name (default: the profile's, from patchbay environment use)",
    )
    .option("--json", jsonHelp);
  addClientOptions(command).action(() => {
    const flags = command.opts<F>();
    return openEnvironmentSession(flags, resource, spec.item ? command.args[0] : undefined).then((session) =>
      spec.run(session, flags),
    );
  });
}

/**
 * The `environment <group>` command with its `list` (an aligned table, or the API's page with
 * --json); `add` declares the group's other commands.
 */
export function addEnvironmentGroup<T>(
  environment: Command,
  resource: Resource,
  description: string,
  list: { noun: string; description: string; render: (items: T[], style: Style) => string },
) {
  const group = environment
    .command(resource.group)
    .description(`${description} (--environment <uuid-or-name>, or the profile's)`);
  const add = <F extends SessionFlags>(spec: CommandSpec<F>, parent = group) =>
    addEnvironmentCommand(parent, resource, spec);
  add<SessionFlags & { pageSize?: string; cursor?: string; all?: boolean }>({
    name: "list",
    description: list.description,
    options: [
      ["--page-size <n>", `${list.noun} per page, 1–200 (server default 50)`],
      ["--cursor <cursor>", "continue from a previous page's nextCursor"],
      ["--all", "follow nextCursor until the last page"],
    ],
    run: async (session, flags) => {
      const raw = flags.pageSize;
      if (raw !== undefined && (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 200)) {
        throw usageError(`--page-size must be 1–200 (got "${raw}")`);
      }
      if (flags.all && flags.cursor !== undefined)
        throw usageError("--all starts at the first page; drop --cursor");
      const pageSize = raw === undefined ? undefined : String(Number(raw));
      const page = await readPages<T>(session, session.path(), { pageSize, cursor: flags.cursor }, flags.all);
      session.show(page, list.render(page.items, session.style));
      if (!session.json && page.nextCursor !== null) {
        session.info(`more ${list.noun}: --cursor ${page.nextCursor} (or --all)`);
      }
    },
  });
  return { group, add };
}
