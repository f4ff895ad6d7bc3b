import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { asc, eq, sql } from "drizzle-orm";
import postgres from "postgres";
import { testPgUrl } from "../../../test/database.ts";
import { describe, expect, test } from "../../../test/fixtures.ts";
import { echoTool, slowTool } from "../../../test/lib/mcp-servers.ts";
import { scriptedModel } from "../../../test/lib/scripted-model.ts";
import { readyTask, runAsJob, taskDeps } from "../../../test/lib/task-setup.ts";
import { eventually } from "../../../test/lib/wait.ts";
import { type DatabaseTarget, openDatabase } from "../../platform/db/client.ts";
import { migrateDatabase } from "../../platform/db/migrate.ts";
import { tasks, taskToolCalls } from "../../platform/db/schema/tasks.ts";

const child = fileURLToPath(new URL("../../../test/lib/task-child.ts", import.meta.url));

/**
 * A database a second process can open: a PGlite directory (one process at a time) or a fresh
 * PostgreSQL database on the `test:pg` lane.
 */
async function sharedDatabase(): Promise<{ target: DatabaseTarget; drop(): Promise<void> }> {
  if (!testPgUrl) {
    const dir = await mkdtemp(join(tmpdir(), "patchbay-crash-"));
    return {
      target: { kind: "pglite", dataDir: dir },
      drop: () => rm(dir, { recursive: true, force: true }),
    };
  }
  const name = `patchbay_test_${randomBytes(6).toString("hex")}`;
  const admin = postgres(testPgUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(testPgUrl);
  url.pathname = `/${name}`;
  return {
    target: { kind: "postgres", url: url.toString() },
    async drop() {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

describe("the call record", () => {
  test("a worker killed mid-call leaves the attempt recorded as ambiguous; the server saw exactly one request", async ({
    mcp,
    testCa,
  }) => {
    const server = await mcp.start({ tools: [slowTool(120_000, "hang")] });
    const shared = await sharedDatabase();
    try {
      // Set up here, then hand the database to the worker (PGlite: one process at a time).
      let handle = await openDatabase(shared.target);
      await migrateDatabase(handle);
      let deps = taskDeps({ database: handle, ca: testCa, ports: [server.port] });
      const task = await readyTask(deps, server.url);
      await deps.telemetry.close();
      await deps.egress.close();
      await handle.close();

      const worker = spawn(process.execPath, [child], {
        env: {
          ...process.env,
          TASK_CHILD: JSON.stringify({
            database: shared.target,
            ca: testCa,
            port: server.port,
            task: { id: task.id, organizationId: task.organizationId },
            toolName: "kb__hang",
          }),
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      worker.stdout.on("data", (chunk) => {
        output += String(chunk);
      });
      worker.stderr.on("data", (chunk) => {
        output += String(chunk);
      });
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        worker.once("exit", (_code, signal) => resolve(signal)),
      );
      // The request has reached the server and its tool is running: the worker dies now.
      await eventually(async () => (server.count("tools/call", "hang") > 0 ? true : undefined), 60_000).catch(
        (error: Error) => {
          worker.kill("SIGKILL");
          throw new Error(`${error.message}; worker output:\n${output}`);
        },
      );
      worker.kill("SIGKILL");
      expect(await exited).toBe("SIGKILL");
      expect(output).toContain("RUNNING");
      expect(output).not.toContain("FINISHED");

      handle = await openDatabase(shared.target);
      deps = taskDeps({ database: handle, ca: testCa, ports: [server.port] });
      try {
        const record = () =>
          deps.db
            .select()
            .from(taskToolCalls)
            .where(eq(taskToolCalls.taskId, task.id))
            .orderBy(asc(taskToolCalls.id));
        const rows = await record();
        expect(rows).toEqual([
          expect.objectContaining({
            modelToolName: "kb__hang",
            toolName: "hang",
            outcome: "ambiguous",
            errorCode: null,
            durationMs: 0,
          }),
        ]);
        expect(server.count("tools/call")).toBe(1);

        // The job comes back to another worker: the task ends `interrupted` and is not re-run.
        expect(await runAsJob(deps, task)).toMatchObject({ status: "failed", errorCode: "interrupted" });
        expect(await record()).toEqual(rows);
        expect(server.count("tools/call")).toBe(1);
      } finally {
        await deps.telemetry.close();
        await deps.egress.close();
        await handle.close();
      }
    } finally {
      await shared.drop();
    }
  }, 120_000);

  test("every call's record is final before the step's transcript is stored and before the task ends", async ({
    deps,
    mcp,
  }) => {
    const server = await mcp.start({ tools: [echoTool("search")] });
    // The database itself refuses any task update while one of its calls is still `ambiguous`
    // (every call here answers), and each finishing write takes 300 ms. On PostgreSQL the
    // finishing write and the task's update run on different connections, so a runtime that
    // did not wait for its records would trip the check. (PGlite runs one statement at a time.)
    const setUp = [
      sql`create function test_slow_finish() returns trigger language plpgsql as $$
        declare until timestamptz := clock_timestamp() + interval '300 milliseconds';
        begin
          while clock_timestamp() < until loop end loop;
          return new;
        end $$`,
      sql`create trigger test_slow_finish before update on task_tool_calls
        for each row execute function test_slow_finish()`,
      sql`create function test_records_final() returns trigger language plpgsql as $$
        begin
          if exists (select 1 from task_tool_calls where task_id = new.id and outcome = 'ambiguous') then
            raise exception 'task % updated while a call record is unfinished', new.id;
          end if;
          return new;
        end $$`,
      sql`create trigger test_records_final before update on tasks
        for each row execute function test_records_final()`,
    ];
    for (const statement of setUp) await deps.db.execute(statement);
    try {
      const script = scriptedModel([
        // Two calls in one step, then one more.
        {
          toolCalls: [
            { name: "kb__search", input: { text: "a" } },
            { name: "kb__search", input: { text: "b" } },
          ],
        },
        { toolCalls: [{ name: "kb__search", input: { text: "c" } }] },
        { toolCalls: [{ name: "finish", input: { summary: "done" } }] },
      ]);
      const d = { ...deps, languageModel: script.model };
      const task = await readyTask(d, server.url);
      expect(await runAsJob(d, task)).toMatchObject({ status: "succeeded" });
      expect(server.count("tools/call", "search")).toBe(3);
      const rows = await deps.db
        .select()
        .from(taskToolCalls)
        .where(eq(taskToolCalls.taskId, task.id))
        .orderBy(asc(taskToolCalls.id));
      // The three searches and the runtime's own `finish`.
      expect(rows.map((r) => [r.toolName, r.outcome])).toEqual([
        ["search", "ok"],
        ["search", "ok"],
        ["search", "ok"],
        ["finish", "ok"],
      ]);
      const [row] = await deps.db.select().from(tasks).where(eq(tasks.id, task.id));
      expect(row?.status).toBe("succeeded");
    } finally {
      for (const statement of [
        sql`drop trigger test_records_final on tasks`,
        sql`drop function test_records_final()`,
        sql`drop trigger test_slow_finish on task_tool_calls`,
        sql`drop function test_slow_finish()`,
      ]) {
        await deps.db.execute(statement);
      }
    }
  });
});
