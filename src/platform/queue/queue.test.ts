import { randomBytes } from "node:crypto";
import type { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import PgBoss from "pg-boss";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { createTestDatabase, testPgUrl } from "../../../test/database.ts";
import { transaction } from "../db/after-commit.ts";
import { type DatabaseHandle, openDatabase } from "../db/client.ts";
import { migrateDatabase } from "../db/migrate.ts";
import { createLogger } from "../logging/logger.ts";
import { createJobs, type Job, type Jobs, type JobsOptions, type QueueOptions } from "./queue.ts";
import { pgliteExecutor } from "./sql-executor.ts";

type Engine = { handle: DatabaseHandle; pglite?: PGlite; url?: string; drop(): Promise<void> };

const engines: { name: string; open(): Promise<Engine> }[] = [
  {
    name: "PGlite",
    async open() {
      const handle = await openDatabase({ kind: "pglite", dataDir: "memory" });
      await migrateDatabase(handle);
      // drizzle's documented handle on its driver client, until DatabaseHandle exposes it.
      const { $client } = handle.db as unknown as { $client: PGlite };
      return { handle, pglite: $client, drop: () => handle.close() };
    },
  },
  ...(testPgUrl ? [{ name: "PostgreSQL", open: createTestDatabase }] : []),
];

const silent = createLogger({ level: "silent" });

async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(engines)("jobs on $name", ({ open }) => {
  let engine: Engine;
  const started: Jobs[] = [];

  beforeAll(async () => {
    engine = await open();
    await engine.handle.db.execute(sql`create table job_probe (id text primary key)`);
  });
  afterEach(async () => {
    await Promise.all(started.splice(0).map((jobs) => jobs.stop({ graceful: false })));
  });
  afterAll(async () => {
    await engine?.drop();
  });

  /** A fresh queue name per test, so no test sees another's jobs (dotted, like "tasks.run"). */
  const queueName = () => `test.${randomBytes(4).toString("hex")}`;

  async function startJobs(queues: Record<string, QueueOptions>, extra: Partial<JobsOptions> = {}) {
    const jobs = createJobs({
      database: engine.handle,
      pglite: engine.pglite,
      postgresUrl: engine.url,
      logger: silent,
      queues,
      pollingIntervalSeconds: 0.5,
      maintenanceIntervalSeconds: 1,
      ...extra,
    });
    started.push(jobs);
    return jobs;
  }

  async function jobRow(queue: string, id: string) {
    const rows = await engine.handle.db.execute(
      sql`select state, retry_count, output from pgboss.job where name = ${queue} and id = ${id}`,
    );
    const list: unknown[] = Array.isArray(rows) ? rows : (rows as { rows: unknown[] }).rows;
    return list[0] as { state: string; retry_count: number; output: Record<string, unknown> } | undefined;
  }

  async function jobCount(queue: string) {
    const rows = await engine.handle.db.execute(sql`select id from pgboss.job where name = ${queue}`);
    return (Array.isArray(rows) ? rows : (rows as { rows: unknown[] }).rows).length;
  }

  test("a start creates a queue as declared, and a later start with other settings updates it", async () => {
    const queue = queueName();
    const settings = async () => {
      const rows = await engine.handle.db.execute(
        sql`select policy, expire_seconds, updated_on from pgboss.queue where name = ${queue}`,
      );
      const list: unknown[] = Array.isArray(rows) ? rows : (rows as { rows: unknown[] }).rows;
      return list[0] as { policy: string; expire_seconds: number; updated_on: unknown } | undefined;
    };
    const first = await startJobs({ [queue]: { expireInSeconds: 60 } });
    await first.start();
    await first.stop({ graceful: false });
    const created = await settings();
    expect(created).toMatchObject({ policy: "standard", expire_seconds: 60 });

    const same = await startJobs({ [queue]: { expireInSeconds: 60 } });
    await same.start();
    await same.stop({ graceful: false });
    // As declared: not written again.
    expect(String((await settings())?.updated_on)).toBe(String(created?.updated_on));

    const changed = await startJobs({ [queue]: { policy: "stately", expireInSeconds: 120 } });
    await changed.start();
    expect(await settings()).toMatchObject({ policy: "stately", expire_seconds: 120 });
  });

  test("a sent job is handled once and completed", async () => {
    const queue = queueName();
    const jobs = await startJobs({ [queue]: {} });
    const seen: Job[] = [];
    await jobs.work(queue, async (job) => {
      seen.push(job);
    });
    await jobs.start();
    const id = await jobs.send(queue, { hello: "world" });
    expect(id).toEqual(expect.any(String));
    await waitFor("the job", () => seen.length === 1);
    expect(seen[0]).toMatchObject({ id, data: { hello: "world" } });
    await waitFor("completion", async () => (await jobRow(queue, id ?? ""))?.state === "completed");
    await pause(700); // a poll or two: nothing runs it again
    expect(seen).toHaveLength(1);
  });

  test("a job sent in a transaction exists iff the transaction commits", async () => {
    const queue = queueName();
    const jobs = await startJobs({ [queue]: {} });
    const seen: string[] = [];
    await jobs.work(queue, async (job) => {
      seen.push(String(job.data.probe));
    });
    await jobs.start();

    await expect(
      engine.handle.db.transaction(async (tx) => {
        await tx.execute(sql`insert into job_probe (id) values ('rolled-back')`);
        await jobs.send(queue, { probe: "rolled-back" }, { tx });
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await jobCount(queue)).toBe(0);

    await engine.handle.db.transaction(async (tx) => {
      await tx.execute(sql`insert into job_probe (id) values ('committed')`);
      await jobs.send(queue, { probe: "committed" }, { tx, startAfter: new Date(Date.now() - 1000) });
      // Workers poll meanwhile; an uncommitted job is invisible to them.
      await pause(800);
      expect(seen).toEqual([]);
    });
    await waitFor("the committed job", () => seen.length === 1);
    expect(seen).toEqual(["committed"]);
    expect(await jobCount(queue)).toBe(1);
  });

  test("a sent job wakes this process's idle worker: it starts before the next poll, after its transaction commits", async () => {
    const queue = queueName();
    // A poll far longer than the waits below: only a wake can start these jobs in time.
    const jobs = await startJobs({ [queue]: {} }, { pollingIntervalSeconds: 60 });
    const seen: string[] = [];
    await jobs.work(queue, async (job) => {
      seen.push(String(job.data.probe));
    });
    await jobs.start();
    // The worker has fetched once at its start; after this job it sleeps until woken or polled.
    const first = (await jobs.send(queue, { probe: "first" })) ?? "";
    await waitFor("the first job", () => seen.length === 1);
    await waitFor(
      "the first job's completion",
      async () => (await jobRow(queue, first))?.state === "completed",
    );

    await jobs.send(queue, { probe: "outside a transaction" });
    await waitFor("the job sent outside a transaction", () => seen.length === 2);

    await transaction(engine.handle.db, async (tx) => {
      await jobs.send(queue, { probe: "in a transaction" }, { tx });
    });
    await waitFor("the job sent in a transaction", () => seen.length === 3);
    expect(seen).toEqual(["first", "outside a transaction", "in a transaction"]);
  });

  test("50 jobs across workers are each handled exactly once", async () => {
    const queue = queueName();
    // Several instances share a PostgreSQL database; PGlite is one process, so one instance.
    const instances = await Promise.all(
      Array.from({ length: engine.url ? 2 : 1 }, () => startJobs({ [queue]: {} })),
    );
    const runs = new Map<string, number>();
    const perInstance = instances.map(() => 0);
    for (const [index, jobs] of instances.entries()) {
      const handler = async (job: Job) => {
        runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
        perInstance[index] = (perInstance[index] ?? 0) + 1;
        await pause(20);
      };
      await jobs.work(queue, handler, { concurrency: engine.url ? 5 : 10 });
      await jobs.start();
    }
    const [first] = instances;
    if (!first) throw new Error("no instance");
    const ids = await Promise.all(Array.from({ length: 50 }, (_, n) => first.send(queue, { n })));
    await waitFor("all 50 jobs", () => runs.size === 50, 20_000);
    await pause(700);
    expect(new Set(ids).size).toBe(50);
    expect([...runs.keys()].sort()).toEqual([...ids].sort());
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
    expect(perInstance.every((count) => count > 0)).toBe(true);
  });

  test("a handler that throws fails the job, which is not run again (retryLimit 0)", async () => {
    const queue = queueName();
    const jobs = await startJobs({ [queue]: {} });
    let calls = 0;
    await jobs.work(queue, async () => {
      calls++;
      throw new Error("model refused");
    });
    await jobs.start();
    const id = (await jobs.send(queue, {})) ?? "";
    await waitFor("failure", async () => (await jobRow(queue, id))?.state === "failed");
    await pause(1500); // polls and a maintenance round: neither retries nor resumes it
    expect(calls).toBe(1);
    expect(await jobRow(queue, id)).toMatchObject({ state: "failed", output: { message: "model refused" } });
  });

  test("retryLimit re-runs a throwing handler that many times", async () => {
    const queue = queueName();
    const jobs = await startJobs({ [queue]: {} });
    let calls = 0;
    await jobs.work(queue, async () => {
      calls++;
      throw new Error("flaky");
    });
    await jobs.start();
    const id = (await jobs.send(queue, {}, { retryLimit: 1 })) ?? "";
    await waitFor("final failure", async () => (await jobRow(queue, id))?.state === "failed");
    expect(calls).toBe(2);
  });

  test("stop and start: queued jobs wait, a run cut off by stop is resumed", async () => {
    const queue = queueName();
    const jobs = await startJobs({ [queue]: {} });
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let cutOff: Job | undefined;
    const seen = new Map<string, number>();
    await jobs.work(
      queue,
      async (job) => {
        if (!cutOff) {
          cutOff = job;
          await gate;
          return;
        }
        seen.set(job.id, Number(job.data.n));
      },
      { concurrency: 2 },
    );
    await jobs.start();
    const inFlight = (await jobs.send(queue, { n: 0 })) ?? "";
    await waitFor("the first run", () => cutOff !== undefined);
    await jobs.stop({ graceful: true, timeoutMs: 1000 });
    expect(cutOff?.signal.aborted).toBe(true);
    release(); // the cut-off handler returning late must not complete the job
    await pause(100);
    expect(await jobRow(queue, inFlight)).toMatchObject({ state: "failed" });

    await jobs.start();
    const queued = await Promise.all([1, 2, 3].map((n) => jobs.send(queue, { n })));
    await waitFor("all four jobs", () => seen.size === 4);
    expect([...seen.keys()].sort()).toEqual([inFlight, ...queued].sort());
    expect(await jobRow(queue, inFlight)).toMatchObject({ state: "completed", retry_count: 1 });
  });

  test("jobs queued while no worker runs wait for the next start", async () => {
    const queue = queueName();
    const sender = await startJobs({ [queue]: {} });
    await sender.start();
    const queued = await Promise.all([1, 2, 3].map((n) => sender.send(queue, { n })));
    await sender.stop();

    const worker = await startJobs({ [queue]: {} });
    const seen: string[] = [];
    await worker.work(
      queue,
      async (job) => {
        seen.push(job.id);
      },
      { concurrency: 3 },
    );
    await worker.start();
    await waitFor("the queued jobs", () => seen.length === 3);
    expect(seen.sort()).toEqual([...queued].sort());
  });

  test("a run whose worker vanished is resumed by another worker after it expires", async () => {
    const queue = queueName();
    const jobs = await startJobs({ [queue]: { expireInSeconds: 1 } });
    await jobs.start();
    const id = (await jobs.send(queue, { step: 3 })) ?? "";

    // A worker that claims the job and then dies: a bare pg-boss that fetches and never reports.
    const doomed = new PgBoss({
      ...(engine.pglite
        ? { db: pgliteExecutor(engine.pglite) as PgBoss.Db }
        : { connectionString: engine.url, max: 1 }),
      supervise: false,
      schedule: false,
    });
    await doomed.start();
    const [claimed] = await doomed.fetch(queue);
    expect(claimed?.id).toBe(id);
    await doomed.stop({ graceful: false });

    const seen: Job[] = [];
    await jobs.work(queue, async (job) => {
      seen.push(job);
    });
    await waitFor("the resumed run", () => seen.length === 1, 15_000);
    expect(seen[0]).toMatchObject({ id, data: { step: 3 } });
    await waitFor("completion", async () => (await jobRow(queue, id))?.state === "completed");
  });

  test("a send during start waits for it; a stop during start waits for it, then stops", async () => {
    const queue = queueName();
    const jobs = await startJobs({ [queue]: {} });
    const starting = jobs.start();
    // `patchbay serve` listens before the queue has started: a request may enqueue meanwhile.
    const id = await jobs.send(queue, { n: 1 });
    await starting;
    expect((await jobRow(queue, String(id)))?.state).toBe("created");

    const other = await startJobs({ [queue]: {} });
    const otherStarting = other.start();
    await other.stop({ graceful: false });
    await otherStarting;
    await expect(other.send(queue, {})).rejects.toThrow("not started");
  });

  test("send refuses an undeclared queue and a stopped instance", async () => {
    const queue = queueName();
    const jobs = await startJobs({ [queue]: {} });
    await expect(jobs.send(queue, {})).rejects.toThrow("not started");
    await jobs.start();
    await expect(jobs.send("undeclared", {})).rejects.toThrow('"undeclared" is not declared');
  });
});
