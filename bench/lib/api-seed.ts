/**
 * `bench:api` support: realistic data for every read of the REST surface, written straight into
 * the database (set-based SQL, one statement per table and environment) except spans, which go
 * through OTLP ingest — the fastest correct way to get span chunks, entry spans, services and the
 * problems their exceptions group into. Tenants, keys and environments come from `admin
 * bootstrap` and the API, as a user would make them.
 */

import postgres from "postgres";
import { request } from "undici";
import { bootstrapTenant } from "./bootstrap.ts";
import { traceBatch } from "./otlp-batches.ts";

export type SeedSizes = {
  organizations: number;
  environmentsPerOrganization: number;
  keysPerOrganization: number;
  connectionsPerEnvironment: number;
  tasksPerEnvironment: number;
  problemsPerEnvironment: number;
  /** Over all environments. */
  spans: number;
};

export type SeededConnection = { id: string; discoveryId: string; toolNames: string[] };

export type SeededEnvironment = {
  organizationId: string;
  environmentId: string;
  /** API keys of the environment's organisation, all with the owner's permissions. */
  keys: string[];
  connections: SeededConnection[];
  tasks: string[];
  problems: string[];
  traces: string[];
  services: string[];
};

const SERVICES = ["shop", "checkout", "search", "accounts", "payments", "inventory"];
const TOOLS = 8;

/** The tools every seeded connection discovered: half read-only, all approvable. */
function discoveredTools() {
  return Array.from({ length: TOOLS }, (_, k) => ({
    name: `tool_${k}`,
    title: `Tool ${k}`,
    description: `Looks up record kind ${k} by id or free text; answers at most 50 rows.`,
    inputSchema: {
      type: "object",
      properties: { id: { type: "string" }, query: { type: "string", maxLength: 200 } },
      additionalProperties: false,
    },
    annotations: { readOnlyHint: k % 2 === 0 },
    hash: `${k}`.repeat(64).slice(0, 64),
    approvable: true,
  }));
}

async function api(
  base: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const res = await request(`${base}/api/v1${path}`, {
    method: method as "GET",
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined
        ? {}
        : { "content-type": "application/json", "idempotency-key": crypto.randomUUID() }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${path} answered ${res.statusCode}: ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** Organisations through `admin bootstrap` (before the server starts: it runs the migrations). */
export async function bootstrapOrganizations(
  patchbayBin: string,
  env: NodeJS.ProcessEnv,
  count: number,
  signal?: AbortSignal,
) {
  const tenants = [];
  for (let i = 0; i < count; i++) {
    const args = { ...env };
    tenants.push(
      await bootstrapTenantNamed(patchbayBin, args, `Bench org ${i + 1}`, `owner${i + 1}@bench.test`, signal),
    );
  }
  return tenants;
}

async function bootstrapTenantNamed(
  bin: string,
  env: NodeJS.ProcessEnv,
  orgName: string,
  email: string,
  signal?: AbortSignal,
) {
  // `bootstrapTenant` runs `admin bootstrap --json`; the name and email ride on extra arguments.
  return bootstrapTenant(bin, env, signal, ["--org-name", orgName, "--email", email]);
}

/** Everything else, against a running server at `base` and its database at `databaseUrl`. */
export async function seed(args: {
  base: string;
  databaseUrl: string;
  tenants: Array<{ organizationId: string; environmentId: string; userId: string; apiKey: string }>;
  sizes: SeedSizes;
  log: (message: string) => void;
}): Promise<SeededEnvironment[]> {
  const { base, sizes, log } = args;
  const sql = postgres(args.databaseUrl, { max: 4, onnotice: () => {} });
  try {
    const environments: SeededEnvironment[] = [];
    for (const [i, tenant] of args.tenants.entries()) {
      const me = await api(base, tenant.apiKey, "GET", "/me");
      const permissions = me.permissions as string[];
      const keys = [tenant.apiKey];
      for (let k = 1; k < sizes.keysPerOrganization; k++) {
        const created = await api(base, tenant.apiKey, "POST", "/api-keys", {
          name: `bench ${k}`,
          permissions,
        });
        keys.push(created.secret as string);
      }
      const environmentIds = [tenant.environmentId];
      for (let e = 1; e < sizes.environmentsPerOrganization; e++) {
        const created = await api(base, tenant.apiKey, "POST", "/environments", { name: `bench ${i}-${e}` });
        environmentIds.push(created.id as string);
      }
      for (const environmentId of environmentIds) {
        environments.push(await seedEnvironment(sql, { ...tenant, environmentId, keys }, sizes));
      }
    }
    log(`seeded ${environments.length} environments in ${args.tenants.length} organisations (SQL)`);
    await ingestSpans(base, environments, sizes.spans, log);
    for (const environment of environments) {
      const traces = await sql<{ trace_id: string }[]>`
        select distinct trace_id from telemetry_trace_chunks
        where environment_id = ${environment.environmentId} limit 200`;
      environment.traces = traces.map((r) => r.trace_id);
      const problems = await sql<{ id: string }[]>`
        select id from problems where environment_id = ${environment.environmentId}`;
      environment.problems = problems.map((r) => r.id);
    }
    await sql`analyze`;
    return environments;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

async function seedEnvironment(
  sql: postgres.Sql,
  tenant: { organizationId: string; environmentId: string; userId: string; keys: string[] },
  sizes: SeedSizes,
): Promise<SeededEnvironment> {
  const { organizationId, environmentId, userId } = tenant;
  const tools = discoveredTools();
  const manifest = tools.slice(0, 4).map(({ hash: _h, approvable: _a, ...t }) => t);
  const tag = environmentId.replaceAll("-", "").slice(0, 12);
  const connections = await sql<{ id: string; discovery_id: string }[]>`
    insert into mcp_connections (id, organization_id, environment_id, alias, display_name, endpoint_url,
      endpoint_origin, auth_kind, latest_discovery_id, approved_at, approved_by, approved_config_version,
      approved_manifest, approved_manifest_hash, approved_tool_count, attested_read_tools, created_at, updated_at)
    select 'mcp_' || substr(md5(${tag} || g), 1, 24), ${organizationId}, ${environmentId}, 'svc-' || g,
      'Service ' || g, 'https://mcp' || g || '.example.com/mcp', 'https://mcp' || g || '.example.com', 'none',
      'dsc_' || substr(md5(${tag} || 'd' || g), 1, 24),
      case when g % 2 = 0 then now() - interval '1 day' end, case when g % 2 = 0 then ${userId} end,
      case when g % 2 = 0 then 1 end, case when g % 2 = 0 then ${sql.json(manifest)}::jsonb end,
      case when g % 2 = 0 then md5(${tag} || 'm' || g) || md5(${tag} || 'n' || g) end,
      case when g % 2 = 0 then 4 else 0 end, '[]'::jsonb,
      now() - (g || ' hours')::interval, now() - (g || ' hours')::interval
    from generate_series(1, ${sizes.connectionsPerEnvironment}) g
    returning id, latest_discovery_id as discovery_id`;
  await sql`
    insert into mcp_discoveries (id, organization_id, environment_id, connection_id, connection_revision,
      config_version, manifest_hash, tool_count, tools, discovered_at)
    select c.latest_discovery_id, ${organizationId}, ${environmentId}, c.id, 1, 1, md5(c.id) || md5(c.alias),
      ${TOOLS}, ${sql.json(tools)}::jsonb, now() - interval '2 days'
    from mcp_connections c where c.environment_id = ${environmentId}`;

  const snapshot = {
    takenAt: new Date().toISOString(),
    connections: connections.slice(0, 2).map((c) => ({
      connectionId: c.id,
      alias: "svc",
      revision: 1,
      manifestHash: "0".repeat(64),
    })),
    tools: manifest.map((t) => ({
      ...t,
      modelName: `svc__${t.name}`,
      connectionId: connections[0]?.id ?? "",
      toolName: t.name,
    })),
  };
  const transcript = [
    { type: "user", text: "Find why checkout fails for EU customers since this morning." },
    ...Array.from({ length: 4 }, (_, k) => [
      { type: "tool_call", callId: `c${k}`, tool: "svc__tool_0", input: { query: `orders ${k}` } },
      { type: "tool_result", callId: `c${k}`, tool: "svc__tool_0", outcome: "ok", output: { rows: k * 3 } },
    ]).flat(),
    { type: "assistant", text: "The VAT service times out for EU addresses; see the trace." },
  ];
  const tasks = await sql<{ id: string }[]>`
    insert into tasks (id, organization_id, environment_id, instructions, status, summary, snapshot, budgets,
      usage, transcript, created_by, created_at, started_at, finished_at)
    select 'tsk_' || substr(md5(${tag} || 't' || g), 1, 24), ${organizationId}, ${environmentId},
      'Investigate incident ' || g, 'succeeded', 'Found the cause of incident ' || g, ${sql.json(snapshot)}::jsonb,
      '{"maxSteps":20,"maxTokens":100000,"maxDurationMs":600000}'::jsonb,
      '{"steps":5,"inputTokens":12000,"outputTokens":900}'::jsonb, ${sql.json(transcript)}::jsonb, ${userId},
      now() - (g || ' minutes')::interval, now() - (g || ' minutes')::interval, now() - (g || ' minutes')::interval
    from generate_series(1, ${sizes.tasksPerEnvironment}) g
    returning id`;
  await sql`
    insert into task_tool_calls (task_id, model_tool_name, connection_id, connection_revision, tool_name,
      started_at, duration_ms, outcome)
    select t.id, 'svc__tool_' || k, ${connections[0]?.id ?? null}, 1, 'tool_' || k, t.created_at, 20 + k, 'ok'
    from tasks t cross join generate_series(0, 4) k where t.environment_id = ${environmentId}`;
  await sql`
    insert into task_call_approvals (id, organization_id, environment_id, task_id, connection_id,
      connection_revision, tool_name, model_tool_name, arguments, arguments_hash, state, requested_at,
      expires_at, decided_by, decided_at)
    select 'cap_' || substr(md5(t.id || k), 1, 24), ${organizationId}, ${environmentId}, t.id,
      ${connections[0]?.id ?? ""}, 1, 'tool_1', 'svc__tool_1', '{"id":"42"}'::jsonb, md5(t.id || k),
      'approved', t.created_at, t.created_at + interval '10 minutes', ${userId}, t.created_at
    from tasks t cross join generate_series(1, 2) k where t.environment_id = ${environmentId}`;
  await sql`
    insert into problems (id, organization_id, environment_id, fingerprint, title, culprit, service_name,
      exception_type, status, count, first_seen, last_seen, sample_trace_ids, sample_message,
      sample_stacktrace, created_at, updated_at)
    select 'prb_' || substr(md5(${tag} || 'p' || g), 1, 24), ${organizationId}, ${environmentId},
      md5(${tag} || 'f' || g) || md5(${tag} || 'g' || g), 'TypeError: cannot read property <*> of undefined (' || g || ')',
      'src/handlers/h' || g || '.ts in handle', (${SERVICES}::text[])[1 + g % ${SERVICES.length}], 'TypeError',
      (array['open','resolved','regressed','ignored'])[1 + g % 4], 1 + g * 7,
      now() - interval '3 days', now() - (g || ' minutes')::interval,
      array[md5(g::text) || md5('x' || g)], 'cannot read property id of undefined',
      'TypeError: cannot read property id of undefined\n    at handle (src/handlers/h' || g || '.ts:12:5)',
      now() - interval '3 days', now()
    from generate_series(1, ${sizes.problemsPerEnvironment}) g`;
  return {
    organizationId,
    environmentId,
    keys: tenant.keys,
    connections: connections.map((c) => ({
      id: c.id,
      discoveryId: c.discovery_id,
      toolNames: tools.map((t) => t.name),
    })),
    tasks: tasks.map((t) => t.id),
    problems: [],
    traces: [],
    services: SERVICES,
  };
}

/** `spans` spans over all environments, through OTLP (a publishable key per environment). */
async function ingestSpans(
  base: string,
  environments: SeededEnvironment[],
  spans: number,
  log: (m: string) => void,
) {
  const perBatch = 512;
  const templates = SERVICES.map((service) => traceBatch({ spans: perBatch, errorEvery: 50, service }));
  const keys: string[] = [];
  for (const environment of environments) {
    const created = await api(
      base,
      environment.keys[0] ?? "",
      "POST",
      `/environments/${environment.environmentId}/publishable-keys`,
      { name: "bench exporter" },
    );
    keys.push(created.key as string);
  }
  const batches = Math.ceil(spans / perBatch);
  let next = 0;
  const started = Date.now();
  const worker = async () => {
    for (;;) {
      const n = next++;
      if (n >= batches) return;
      const key = keys[n % keys.length] ?? "";
      const template = templates[Math.floor(n / keys.length) % templates.length];
      if (!template) return;
      const res = await request(`${base}/v1/traces`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/x-protobuf" },
        body: template.fresh(),
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`OTLP export answered ${res.statusCode}: ${text}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  log(`ingested ${batches * perBatch} spans over OTLP in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
