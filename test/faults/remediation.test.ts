import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { generateKek } from "../../src/platform/vault/keyring.ts";
import { type Client, client } from "../http.ts";
import { type GitRepo, makeGitRepo } from "../lib/git-repo.ts";
import { FIXED, fixtureFiles, PROBLEM_ID, type RunView, waitForRun } from "../lib/remediation.ts";
import { runPatchbay, type ServerEnv, type SpawnedServer } from "../lib/spawn-server.ts";
import { eventually } from "../lib/wait.ts";
import { type PgCluster, startPgCluster } from "./lib/pg-cluster.ts";
import {
  type FaultEvent,
  faultEvents,
  HELD_TOOL,
  HELD_TURN,
  SCRIPT_TOOLS,
  spawnRemediationInstance,
} from "./lib/remediation-instance.ts";

/**
 * An instance killed with SIGKILL in the middle of a remediation run, on the fault suite's own
 * PostgreSQL cluster. Two instances share the run's job queue; the agent's fifth tool call
 * (`search_logs`) never returns on whichever instance makes it first, and that instance is
 * killed while the call is in flight. The goals (docs/remediation.md, "How a run executes"):
 * the run finishes on the other instance with its pull request; the steps committed before the
 * kill are neither asked of the model nor run again; the step in flight is asked once more; the
 * records (the run's progress events, the agent task's transcript, the queue's jobs) hold each
 * step once; and the run resumes within the queue's expiry plus a maintenance round.
 */

/** The remediation queue's expiry here (the service's is 65 minutes; see remediation-child.ts). */
const JOB_EXPIRY_S = Number(process.env.PATCHBAY_FAULTS_JOB_EXPIRY_SECONDS ?? 20);
/** Expiry, one maintenance round (1 s), one poll (0.5 s), and room for a loaded machine. */
const RESUME_BOUND_MS = (JOB_EXPIRY_S + 1.5) * 1000 + 5_000;

type Tenant = { organizationId: string; environmentId: string; userId: string; apiKey: string };
type Transcript = { entries: { type: string; tool?: string; callId?: string }[] };
type JobRow = { step: number; state: string; retry_count: number };

/** The REST client of test/http.ts, over the network to a spawned instance. */
const remote = (s: SpawnedServer, key: string): Client =>
  client({ request: (path, init) => fetch(`${s.baseUrl}${path}`, init) }, key);

const ms = (n: number | undefined) => (n === undefined ? "never" : `${(n / 1000).toFixed(1)} s`);

describe("kill -9 during a remediation run", () => {
  let cluster: PgCluster;
  let sql: postgres.Sql;
  let servers: SpawnedServer[] = [];
  let tenant: Tenant;
  let repo: GitRepo;
  let scratch: string;
  const tempDirs: string[] = [];
  const exited = new Set<SpawnedServer>();
  const tmpOf = new Map<SpawnedServer, string>();

  beforeAll(async () => {
    cluster = await startPgCluster();
    const url = await cluster.createDatabase("patchbay");
    sql = postgres(url, { max: 2, onnotice: () => {} });
    scratch = await mkdtemp(join(tmpdir(), "patchbay-faults-rem-"));
    tempDirs.push(scratch);
    const kek = generateKek();
    const env = async (): Promise<ServerEnv> => {
      const dataDir = await mkdtemp(join(tmpdir(), "patchbay-faults-"));
      tempDirs.push(dataDir);
      // Its own temporary directory: the sandbox's working copies land there, and are removed
      // with it (a killed instance cannot remove its own).
      const tmp = join(dataDir, "tmp");
      await mkdir(tmp);
      return {
        DATABASE_URL: url,
        NODE_ENV: "development",
        LOG_LEVEL: "warn",
        PATCHBAY_DATA_DIR: dataDir,
        PATCHBAY_KEK: kek,
        TMPDIR: tmp,
      };
    };
    // Migrates the database, so neither instance makes a demo tenant of its own.
    tenant = JSON.parse(await runPatchbay(["admin", "bootstrap", "--json"], await env())) as Tenant;
    repo = makeGitRepo(fixtureFiles);
    const instance = async () => {
      const instanceEnv = await env();
      const server = await spawnRemediationInstance({
        env: instanceEnv,
        environmentId: tenant.environmentId,
        holdFile: join(scratch, "held"),
        jobExpirySeconds: JOB_EXPIRY_S,
      });
      tmpOf.set(server, instanceEnv.TMPDIR ?? "");
      return server;
    };
    servers = await Promise.all([instance(), instance()]);
    for (const s of servers) void s.exited.then(() => exited.add(s));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await sql?.end({ timeout: 1 });
    await cluster?.destroy();
    repo?.remove();
    await Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  test("the run resumes on the other instance; no step runs twice", async () => {
    const [first] = servers;
    if (!first) throw new Error("no instance");
    const env = tenant.environmentId;
    const registered = await remote(first, tenant.apiKey).post(`/environments/${env}/repositories`, {
      provider: "local-git",
      path: repo.path,
      defaultBranch: "main",
      testCommand: "node --test",
      services: ["checkout"],
    });
    expect(registered.status, await registered.clone().text()).toBe(201);
    const started = await remote(first, tenant.apiKey).post(
      `/environments/${env}/problems/${PROBLEM_ID}/remediations`,
      {},
    );
    expect(started.status, await started.clone().text()).toBe(201);
    const runId = ((await started.json()) as RunView).id;

    // Whichever instance took the agent's step is now inside its held call.
    const logs = () => servers.map((s) => `--- pid ${s.pid} ---\n${s.output().slice(-20_000)}`).join("\n");
    const held = await eventually(
      async () => servers.find((s) => faultEvents(s).some((e) => e.event === "held")),
      60_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}: no instance reached the held call\n${logs()}`);
    });
    const survivor = servers.find((s) => s !== held);
    if (!survivor) throw new Error("no second instance");
    const api = remote(survivor, tenant.apiKey);
    const before = (await (await api.get(`/environments/${env}/remediations/${runId}`)).json()) as RunView;

    const killedAt = Date.now();
    process.kill(held.pid, "SIGKILL");
    const exit = await held.exited;
    const pidGone = (() => {
      try {
        process.kill(held.pid, 0);
        return false;
      } catch {
        return true;
      }
    })();

    const done = await waitForRun(
      api,
      env,
      runId,
      ["awaiting-review", "merged", "closed", "failed", "cancelled"],
      RESUME_BOUND_MS + 60_000,
    );
    const finishedMs = Date.now() - killedAt;
    const transcript = (await (
      await api.get(`/environments/${env}/tasks/${done.taskId}/transcript`)
    ).json()) as Transcript;
    const callRecord = (await (
      await api.get(`/environments/${env}/tasks/${done.taskId}/tool-calls`)
    ).json()) as {
      items: { toolName: string; outcome: string; durationMs: number }[];
    };
    const jobs = await sql<JobRow[]>`
      select (data->>'stepSeq')::int as step, state::text, retry_count
      from pgboss.job where name = 'remediations.step' and data->>'remediationId' = ${runId}
      union all
      select (data->>'stepSeq')::int, state::text, retry_count
      from pgboss.archive where name = 'remediations.step' and data->>'remediationId' = ${runId}
      order by 1`;

    // Who did what, from the instances' own reports.
    const name = (pid: number) => (pid === held.pid ? "killed" : "survivor");
    const events: FaultEvent[] = [...faultEvents(held), ...faultEvents(survivor)];
    const turns = SCRIPT_TOOLS.map((tool, turn) => ({
      tool,
      by: events.filter((e) => e.event === "turn" && e.turn === turn).map((e) => name(e.pid)),
    }));
    const evidenceCalls = (tool: string) =>
      events.filter((e) => e.event === "evidence" && e.tool === tool).map((e) => name(e.pid));
    const jobStarts = events.filter((e) => e.event === "job").sort((a, b) => a.at - b.at);
    const heldStep = events.find((e) => e.event === "held");
    const heldJob = jobStarts.filter((e) => e.pid === held.pid).at(-1);
    const resumedJob = jobStarts.find((e) => e.pid === survivor.pid && e.at > killedAt);
    const resumedMs = resumedJob ? resumedJob.at - killedAt : undefined;
    const expiryDueMs = heldJob ? heldJob.at + JOB_EXPIRY_S * 1000 - killedAt : undefined;
    const leftBehind = (await readdir(tmpOf.get(held) ?? scratch)).filter((f) =>
      f.startsWith("patchbay-ws-"),
    );
    const toolCalls = transcript.entries.filter((e) => e.type === "tool_call");
    const toolResults = transcript.entries.filter((e) => e.type === "tool_result");
    const byType = (type: string) => done.events.filter((e) => e.type === type).length;
    // Progress events other than the agent's steps, as "type status": each transition once.
    const transitions = done.events
      .filter((e) => e.type !== "agent_step")
      .map((e) => (e.status ? `${e.type} ${e.status}` : e.type));

    console.log(
      [
        `── kill -9 during a remediation run (${runId}) ──`,
        `  held: ${HELD_TOOL} (turn ${HELD_TURN + 1} of ${SCRIPT_TOOLS.length}); before the kill the run was ${before.status}, ${before.events.filter((e) => e.type === "agent_step").length} agent steps committed`,
        `  killed instance: exit ${exit.signal ?? exit.code}, pid gone: ${pidGone}; survivor exited: ${exited.has(survivor)}`,
        "  model turns (who asked):",
        ...turns.map(
          ({ tool, by }, turn) => `    ${String(turn + 1).padStart(2)} ${tool.padEnd(12)} ${by.join(", ")}`,
        ),
        `  tool runs: get_trace ${evidenceCalls("get_trace").join(", ")}; search_logs ${evidenceCalls("search_logs").join(", ")} (the killed one held)`,
        `  jobs: ${jobStarts.map((e) => `step ${e.stepSeq} ${name(e.pid)}`).join(" · ")}`,
        `  queue: ${jobs.map((j) => `step ${j.step} ${j.state} after ${j.retry_count + 1} run(s)`).join(" · ")}`,
        `  transcript: ${toolCalls.length} calls, ${toolResults.length} results, ${new Set(toolCalls.map((e) => e.callId)).size} distinct call ids; call record: ${callRecord.items.map((c) => `${c.toolName} ${c.outcome}`).join(", ")}`,
        `  progress events: agent_step ×${byType("agent_step")}; ${transitions.join(" · ")}`,
        `  resumed (job taken again) ${ms(resumedMs)} after the kill; expiry was due ${ms(expiryDueMs)} after it (expireInSeconds ${JOB_EXPIRY_S}, maintenance 1 s; bound ${ms(RESUME_BOUND_MS)})`,
        `  left behind by the killed instance: ${leftBehind.length} sandbox working cop${leftBehind.length === 1 ? "y" : "ies"} in its TMPDIR`,
        `  finished: ${done.status} ${ms(finishedMs)} after the kill; ${done.prUrl ?? "no pull request"}`,
      ].join("\n"),
    );

    const context = `${JSON.stringify(done.events, null, 2)}\n${logs()}`;
    // The kill landed mid-step: the write committed, the held call not.
    expect(heldStep?.pid).toBe(held.pid);
    expect(before.status).toBe("coding");
    expect(before.events.filter((e) => e.type === "agent_step")).toHaveLength(HELD_TURN);
    expect(exit.signal).toBe("SIGKILL");
    expect(pidGone).toBe(true);
    expect(exited.has(survivor)).toBe(false);
    expect(survivor.output(), "an unhandled rejection was logged").not.toContain(
      "unhandled promise rejection",
    );

    // The run finished on the survivor, with its pull request (local git: the review page).
    expect(done.status, context).toBe("awaiting-review");
    expect(done.prUrl).toMatch(/\/remediations\/rem_\w+\/review$/);
    expect(repo.git("rev-list", "--count", `main..patchbay/${runId}`).trim()).toBe("1");
    expect(repo.git("show", `${done.headCommit}:src/order-id.js`)).toBe(FIXED);

    // No committed step asked or run again; the held one asked once more, by the survivor.
    expect(turns).toEqual(
      SCRIPT_TOOLS.map((tool, turn) => ({
        tool,
        by: turn < HELD_TURN ? ["killed"] : turn === HELD_TURN ? ["killed", "survivor"] : ["survivor"],
      })),
    );
    expect(evidenceCalls("get_trace")).toEqual(["killed"]);
    expect(evidenceCalls("search_logs")).toEqual(["killed", "survivor"]);

    // Each step once in the records: the transcript, the progress events, the queue's jobs.
    expect(toolCalls.map((e) => e.tool)).toEqual([...SCRIPT_TOOLS]);
    expect(new Set(toolCalls.map((e) => e.callId)).size).toBe(SCRIPT_TOOLS.length);
    expect(toolResults.map((e) => e.callId)).toEqual(toolCalls.map((e) => e.callId));
    expect(byType("agent_step")).toBe(SCRIPT_TOOLS.length);
    expect(transitions, context).toEqual([
      "created queued",
      "status investigating",
      "status coding",
      "change_proposed validating",
      "tests_passed opening-pr",
      "branch_pushed",
      "review_opened awaiting-review",
    ]);
    // The call record: each call once, final, and the held attempt as the killed instance left
    // it — sent, its outcome never known (`ambiguous`, duration 0) — before the takeover's.
    expect(callRecord.items.map((c) => [c.toolName, c.outcome, c.durationMs === 0])).toEqual([
      ...SCRIPT_TOOLS.slice(0, HELD_TURN).map((tool) => [tool, "ok", expect.any(Boolean)]),
      [HELD_TOOL, "ambiguous", true],
      ...SCRIPT_TOOLS.slice(HELD_TURN).map((tool) => [tool, "ok", expect.any(Boolean)]),
    ]);
    // One job per step (start, agent, validation, review), each completed; only the agent's ran twice.
    expect(heldJob?.stepSeq).toBe(2);
    expect(jobs).toEqual(
      [1, 2, 3, 4].map((step) => ({ step, state: "completed", retry_count: step === 2 ? 1 : 0 })),
    );

    // Resumed within the expiry plus a maintenance round.
    expect(resumedMs).toBeDefined();
    expect(resumedMs ?? Number.POSITIVE_INFINITY).toBeLessThanOrEqual(RESUME_BOUND_MS);
  }, 240_000);
});
