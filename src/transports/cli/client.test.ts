// The `patchbay` REST client end to end: a real `patchbay serve` (child process, temp PGlite),
// real MCP servers over loopback HTTPS (egress dev override), and the CLI as a child process.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { makeTestCa } from "../../../test/lib/egress-servers.ts";
import {
  destructiveTool,
  echoTool,
  type McpTestServer,
  startMcpServer,
} from "../../../test/lib/mcp-servers.ts";
import { runPatchbay, type SpawnedServer, spawnServer } from "../../../test/lib/spawn-server.ts";
import type { Connection, Discovery } from "../../features/connections/schemas.ts";

const bin = fileURLToPath(new URL("../../../bin/patchbay.js", import.meta.url));
const TOKEN = "tok_cli_9d8e7f6a5b4c3d2e";

const dir = mkdtempSync(join(tmpdir(), "patchbay-cli-client-"));
const home = join(dir, "home");
let server: SpawnedServer | undefined;
let bearerServer: McpTestServer;
let openServer: McpTestServer;
let envId = "";
let apiKey = "";
/** Every byte the CLI printed, to prove no secret ever appears in it. */
const transcript: string[] = [];

type Run = { code: number | null; stdout: string; stderr: string };

function cli(args: string[], options: { stdin?: string; env?: Record<string, string | undefined> } = {}) {
  const running = server;
  if (!running) throw new Error("server not started");
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    PATCHBAY_BASE_URL: running.baseUrl,
    PATCHBAY_API_KEY: apiKey,
  };
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return new Promise<Run>((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    child.on("error", reject);
    child.on("close", (code) => {
      transcript.push(stdout, stderr);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.stdin ?? "");
  });
}

/** The command's JSON, after checking it succeeded. */
async function cliJson<T>(args: string[], options?: Parameters<typeof cli>[1]): Promise<T> {
  const run = await cli([...args, "--json"], options);
  expect(run.code, `${args.join(" ")}\n${run.stderr}${run.stdout}`).toBe(0);
  return JSON.parse(run.stdout) as T;
}

const mcp = (command: string, ...rest: string[]) => [
  "environment",
  "mcp",
  command,
  ...rest,
  "--environment",
  envId,
];

beforeAll(async () => {
  const ca = await makeTestCa();
  bearerServer = await startMcpServer({
    ca,
    auth: { kind: "bearer", token: TOKEN },
    tools: [echoTool("search"), echoTool("lookup"), echoTool("bad name")],
  });
  openServer = await startMcpServer({
    ca,
    tools: [echoTool("runbook"), echoTool("status"), destructiveTool("purge")],
  });
  const caFile = join(dir, "ca.pem");
  writeFileSync(caFile, ca.cert);
  const env = {
    NODE_ENV: "development",
    LOG_LEVEL: "silent",
    PATCHBAY_DATA_DIR: join(dir, "data"),
    PATCHBAY_EGRESS_ALLOW_CIDRS: "127.0.0.0/8",
    PATCHBAY_EGRESS_ALLOW_PORTS: `${bearerServer.port},${openServer.port}`,
    PATCHBAY_EGRESS_CA_FILE: caFile,
  };
  // Before the server: a PGlite data dir belongs to one process at a time.
  const boot = JSON.parse(await runPatchbay(["admin", "bootstrap", "--json"], env)) as Record<string, string>;
  envId = boot.environmentId ?? "";
  apiKey = boot.apiKey ?? "";
  server = await spawnServer({ env });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await Promise.all([bearerServer?.close(), openServer?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

describe("patchbay environment mcp against a running server", () => {
  let conn: Connection;

  test("create → credential set --stdin → discover → approve → enable", async () => {
    const created = await cliJson<Connection & { idempotencyKey: string }>(
      mcp("create", "--alias", "runbooks", "--endpoint-url", bearerServer.url, "--auth", "bearer"),
    );
    expect(created).toMatchObject({
      alias: "runbooks",
      displayName: "runbooks",
      revision: 1,
      enabled: false,
    });
    expect(created.readiness).toBe("credential_missing");
    expect(created.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/); // generated and reported

    // A wrong credential is checked against the server and refused: a remote failure.
    const wrong = await cli(mcp("credential", "set", created.id, "--revision", "1", "--stdin"), {
      stdin: "tok_wrong\n",
    });
    expect(wrong.code).toBe(6);
    expect(wrong.stderr).toContain("error: remote_auth_failed:");
    expect(wrong.stderr).toContain(
      `next step: attach a working credential: patchbay environment mcp credential set ${created.id} --environment ${envId} --revision 1 --stdin`,
    );

    // Human mode; the trailing newline of `echo` is dropped.
    const set = await cli(mcp("credential", "set", created.id, "--revision", "1", "--stdin"), {
      stdin: `${TOKEN}\n`,
    });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(/Credential set for mcp_/);
    expect(set.stdout).toMatch(/Readiness\s+approval_missing/);
    expect(set.stdout).toContain(
      `patchbay environment mcp discover ${created.id} --environment ${envId} --revision 2`,
    );
    expect(set.stderr).toMatch(/^idempotency key: [0-9a-f-]{36} \(generated\)$/m);

    const discoveredText = await cli(mcp("discover", created.id, "--revision", "2"));
    expect(discoveredText.code, discoveredText.stderr).toBe(0);
    expect(discoveredText.stdout).toMatch(/^TOOL\s+APPROVABLE\s+ACCESS\s+ANNOTATIONS\s+DESCRIPTION$/m);
    expect(discoveredText.stdout).toMatch(/^search\s+yes\s+read\s+readOnly\s+Echoes its arguments/m);
    expect(discoveredText.stdout).toMatch(/^bad name\s+no\s+\S+\s+\S+\s+not approvable: /m);
    expect(discoveredText.stdout).toContain("write: every call waits for an owner or admin to approve it.");
    expect(discoveredText.stderr).toContain("approve with: patchbay environment mcp approve");

    const discovery = await cliJson<Discovery>(
      mcp("discover", created.id, "--revision", "2", "--idempotency-key", "cli-test-discover-1"),
    );
    expect(discovery.id).toMatch(/^dsc_/);
    expect("idempotencyKey" in discovery).toBe(false); // given, so not reported

    const approved = await cliJson<Connection>(
      mcp(
        "approve",
        created.id,
        "--revision",
        "2",
        "--discovery",
        discovery.id,
        "--tool",
        "search",
        "--tool",
        "lookup",
      ),
    );
    expect(approved).toMatchObject({ revision: 3, readiness: "disabled" });
    expect(approved.approval?.toolCount).toBe(2);

    const enabled = await cli(mcp("enable", created.id, "--revision", "3"));
    expect(enabled.code, enabled.stderr).toBe(0);
    expect(enabled.stdout).toMatch(/^Enabled mcp_/);
    expect(enabled.stdout).toMatch(/Readiness\s+ready/);
    conn = await cliJson<Connection>(mcp("get", created.id));
    expect(conn).toMatchObject({ revision: 4, readiness: "ready", enabled: true });
  });

  test("approve --all-approvable discovers afresh and approves every approvable read tool, write tools only when named", async () => {
    const open = await cliJson<Connection>(
      mcp(
        "create",
        "--alias",
        "status",
        "--display-name",
        "Status",
        "--endpoint-url",
        openServer.url,
        "--auth",
        "none",
      ),
    );
    const run = await cli(mcp("approve", open.id, "--revision", "1", "--all-approvable"));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/discovered dsc_\w+: 3 tools, 3 approvable \(2 chosen\)/);
    expect(run.stdout).toContain("Approved 2 tools of dsc_");
    expect(run.stdout).toContain("Not approved, write tools (name each with --tool): purge.");
    const after = await cliJson<Connection>(mcp("get", open.id));
    expect(after.approval?.toolCount).toBe(2);
    expect(after.approval?.tools.map((t) => t.access)).toEqual(["read", "read"]);
    expect(run.stderr).toContain(after.discovery?.id);
  });

  test("list: an aligned table, --json verbatim, --page-size and --all", async () => {
    const human = await cli(mcp("list"));
    expect(human.code, human.stderr).toBe(0);
    const [header = "", ...rows] = human.stdout.trimEnd().split("\n");
    expect(header).toMatch(/^ID\s+ALIAS\s+READINESS\s+HEALTH\s+ENABLED\s+REVISION\s+NEXT STEP$/);
    const row = rows.find((line) => line.startsWith(conn.id)) ?? "";
    for (const [column, value] of [
      ["ALIAS", "runbooks"],
      ["READINESS", "ready"],
      ["HEALTH", "-"],
      ["ENABLED", "yes"],
      ["REVISION", "4"],
    ] as const) {
      expect(row.indexOf(` ${value}`) + 1, `${column} in\n${human.stdout}`).toBe(header.indexOf(column));
    }
    expect(rows.join("\n")).toMatch(
      /status\s+disabled\s+-\s+no\s+2\s+Enable after reviewing the current approval\./,
    );
    expect(human.stdout).not.toContain("\x1b["); // not a terminal: no colour

    const page = await cliJson<{ items: Connection[]; nextCursor: string | null }>(mcp("list"));
    expect(page.items.map((c) => c.alias).sort()).toEqual(["runbooks", "status"]);
    expect(page.nextCursor).toBeNull();

    const first = await cli(mcp("list", "--page-size", "1"));
    expect(first.stdout.trimEnd().split("\n")).toHaveLength(2);
    expect(first.stderr).toMatch(/more connections: --cursor \S+ \(or --all\)/);
    const all = await cliJson<{ items: Connection[]; nextCursor: string | null }>(
      mcp("list", "--page-size", "1", "--all"),
    );
    expect(all.items).toHaveLength(2);
    expect(all.nextCursor).toBeNull();
  });

  test("a stale --revision is a conflict (5) with the read-again hint", async () => {
    const run = await cli(mcp("disable", conn.id, "--revision", "3"));
    expect(run.code).toBe(5);
    expect(run.stderr).toContain("error: revision_conflict:");
    expect(run.stderr).toContain(
      `next step: read it again (patchbay environment mcp get ${conn.id} --environment ${envId}) and retry with --revision 4`,
    );
    const json = await cli([...mcp("disable", conn.id, "--revision", "3"), "--json"]);
    expect(json.code).toBe(5);
    expect(JSON.parse(json.stdout)).toMatchObject({ code: "revision_conflict", currentRevision: 4 });
  });

  test("get names the approver by email and lists the approved tools", async () => {
    const run = await cli(mcp("get", conn.id));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Approval\s+2 tools \(2 read, 0 write\), \S+ by \S+@\S+$/m);
    expect(run.stdout).not.toMatch(/by usr_/);
    expect(run.stdout).toMatch(/^Approved tools\s+lookup\s+read$/m);
    expect(run.stdout).toMatch(/^\s+search\s+read$/m);
    expect(conn.approval?.approvedByEmail).toMatch(/@/);
  });

  test("deleting an enabled connection is refused before any preview, with the command to disable it", async () => {
    const run = await cli(mcp("delete", conn.id, "--revision", "4", "--yes"));
    expect(run.code).toBe(5);
    expect(run.stderr).toContain(`error: connection_enabled: ${conn.id} is enabled`);
    expect(run.stderr).toContain(
      `next step: patchbay environment mcp disable ${conn.id} --environment ${envId} --revision 4`,
    );
    expect(run.stdout + run.stderr).not.toContain("Deletion preview");
    expect((await cliJson<Connection>(mcp("get", conn.id))).revision).toBe(4);
  });

  test("disable → update → delete --yes (preview effects first)", async () => {
    const disabled = await cliJson<Connection>(mcp("disable", conn.id, "--revision", "4"));
    expect(disabled).toMatchObject({ enabled: false, readiness: "disabled", revision: 5 });

    const updated = await cli(mcp("update", conn.id, "--revision", "5", "--display-name", "Runbooks (prod)"));
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stdout).toMatch(/Display name\s+Runbooks \(prod\)/);

    const refused = await cli(mcp("delete", conn.id, "--revision", "6"));
    expect(refused.code).toBe(2); // stdin is not a terminal and no --yes
    expect(refused.stderr).toContain("pass --yes");

    const deleted = await cli(mcp("delete", conn.id, "--revision", "6", "--yes"));
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toMatch(/Approved tools removed\s+2/);
    expect(deleted.stdout).toMatch(/Credential destroyed\s+yes/);
    expect(deleted.stdout).toContain(`Deleted ${conn.id}.`);

    const gone = await cli(mcp("get", conn.id));
    expect(gone.code).toBe(4);
    expect(gone.stderr).toContain("error: not_found:");
  });

  test("task commands: list, call approvals of an unknown task (4), a decision without --approval (2)", async () => {
    const task = (command: string, ...rest: string[]) => [
      "environment",
      "task",
      command,
      ...rest,
      "--environment",
      envId,
    ];
    const [list, listed, unknown, noApproval] = await Promise.all([
      cli(task("list")),
      cliJson<{ items: unknown[] }>(task("list")),
      cli(task("call-approvals", "tsk_doesnotexist")),
      cli(task("approve-call", "tsk_doesnotexist")),
    ]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^ID\s+KIND\s+STATUS\s+WAITING FOR\s+CREATED$/m);
    expect(listed.items).toEqual([]);
    expect(unknown.code).toBe(4);
    expect(noApproval.code).toBe(2);
    expect(noApproval.stderr).toContain(
      `list them with: patchbay environment task call-approvals tsk_doesnotexist --environment ${envId}`,
    );
  });

  test("usage, auth and not-found errors have their exit codes", async () => {
    const [noEnv, badEnv, wrongKey, noKey, unknown, noStdin, credArg, badRevision, noRevision, unreachable] =
      await Promise.all([
        cli(["environment", "mcp", "list"]),
        cli(["environment", "mcp", "list", "--environment", "prod"]),
        cli(mcp("list", "--api-key", "sk_wrong")),
        cli(mcp("list"), { env: { PATCHBAY_API_KEY: undefined } }),
        cli(mcp("get", "mcp_doesnotexist")),
        cli(mcp("credential", "set", "mcp_x", "--revision", "1"), { stdin: "secret" }),
        cli(mcp("credential", "set", "mcp_x", "secret-as-argument", "--revision", "1")),
        cli(mcp("enable", "mcp_x", "--revision", "abc")),
        cli(mcp("enable", "mcp_x")),
        cli(mcp("list", "--base-url", "http://127.0.0.1:9")),
      ]);
    expect(noEnv.code).toBe(2);
    expect(noEnv.stderr).toContain("error: usage: --environment <uuid or name> is required");
    expect(badEnv.code).toBe(4); // a name, and no environment is called "prod"
    expect(badEnv.stderr).toContain('error: not_found: there is no environment named "prod"');
    expect(wrongKey.code).toBe(3);
    expect(wrongKey.stderr).toContain("error: unauthorized:");
    expect(noKey.code).toBe(3);
    expect(noKey.stderr).toContain("error: no_api_key:");
    expect(unknown.code).toBe(4);
    expect(noStdin.code).toBe(2);
    expect(noStdin.stderr).toContain("pass --stdin");
    expect(credArg.code).toBe(2); // a credential is never taken from an argument
    expect(badRevision.code).toBe(2);
    expect(noRevision.code).toBe(2);
    expect(noRevision.stderr).toContain("--revision <n> is required");
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain("error: unreachable: cannot reach patchbay at http://127.0.0.1:9");
  });
});

describe("profiles and whoami", () => {
  test("profile set --api-key-stdin stores the key 0600 and never prints it; whoami uses it", async () => {
    const noKeyEnv = { PATCHBAY_API_KEY: undefined, PATCHBAY_BASE_URL: undefined };
    const set = await cli(["profile", "set", "--base-url", `${server?.baseUrl}/`, "--api-key-stdin"], {
      stdin: `${apiKey}\n`,
      env: noKeyEnv,
    });
    expect(set.code, set.stderr).toBe(0);
    const file = join(home, ".config", "patchbay", "profiles.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, ".config", "patchbay")).mode & 0o777).toBe(0o700);

    const who = await cli(["whoami"], { env: noKeyEnv });
    expect(who.code, who.stderr).toBe(0);
    expect(who.stdout).toMatch(/^Role\s+owner$/m);
    expect(who.stdout).toMatch(/Permissions\s+.*mcp_connections:manage/);
    expect(who.stdout).toMatch(new RegExp(`^Base URL\\s+${server?.baseUrl}$`, "m"));

    const list = await cli(["profile", "list"], { env: noKeyEnv });
    expect(list.stdout).toMatch(/^default\s+http:\/\/127\.0\.0\.1:\d+\s+stored\s+-$/m);
    const missing = await cli(["whoami", "--profile", "staging"], { env: noKeyEnv });
    expect(missing.code).toBe(2);
  });

  test("environment use remembers an environment; names and aliases stand for ids; commands say where they acted", async () => {
    const noKeyEnv = { PATCHBAY_API_KEY: undefined, PATCHBAY_BASE_URL: undefined };
    const used = await cli(["environment", "use", "production"], { env: noKeyEnv });
    expect(used.code, used.stderr).toBe(0);
    expect(used.stdout).toContain(`Profile default now acts on environment production (${envId}).`);
    const list = await cli(["environment", "mcp", "list", "--json"], { env: noKeyEnv });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stderr).toContain(`environment: production (${envId})`);
    const aliases = (JSON.parse(list.stdout) as { items: Connection[] }).items;
    expect(aliases.map((c) => c.alias)).toContain("status");
    const status = aliases.find((c) => c.alias === "status");
    // The alias stands for the id; --environment takes the name.
    const byAlias = await cli(
      ["environment", "mcp", "get", "status", "--environment", "production", "--json"],
      {
        env: noKeyEnv,
      },
    );
    expect(byAlias.code, byAlias.stderr).toBe(0);
    expect((JSON.parse(byAlias.stdout) as Connection).id).toBe(status?.id);
    const byId = await cli(["environment", "use", envId], { env: noKeyEnv });
    expect(byId.code, byId.stderr).toBe(0);
    expect(byId.stdout).toContain("environment production");
    const unknown = await cli(["environment", "use", "nowhere"], { env: noKeyEnv });
    expect(unknown.code).toBe(4);
    const foreign = await cli(["environment", "use", "00000000-0000-4000-8000-000000000000"], {
      env: noKeyEnv,
    });
    expect(foreign.code).toBe(4);
  });

  test("no secret ever appears in the CLI's output", () => {
    const all = transcript.join("\n");
    expect(all).not.toContain(TOKEN);
    expect(all).not.toContain(apiKey);
  });
});
