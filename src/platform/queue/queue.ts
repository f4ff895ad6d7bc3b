import type { PGlite } from "@electric-sql/pglite";
import type PgBoss from "pg-boss";
import { afterCommit } from "../db/after-commit.ts";
import type { DatabaseHandle, Db } from "../db/client.ts";
import type { Logger } from "../logging/logger.ts";
import { resumeAbandonedJobs } from "./resume-abandoned.ts";
import { type GatedExecutor, gated, pgliteExecutor, transactionExecutor } from "./sql-executor.ts";

export type JobData = Record<string, unknown>;

export type Job = {
  id: string;
  data: JobData;
  /**
   * Aborted when this run no longer owns the job: it outlived its queue's `expireInSeconds`, or
   * `stop()` gave up waiting for it. The job may then be resumed elsewhere, so stop side effects.
   */
  signal: AbortSignal;
};

export type JobHandler = (job: Job) => Promise<void>;

export type SendOptions = {
  /**
   * Enqueue inside this transaction: the job exists iff it commits. This process's workers on the
   * queue are woken once it has (`afterCommit`), instead of at their next poll.
   */
  tx?: Db;
  /** Deduplicates per the queue's policy (a "standard" queue does not). */
  singletonKey?: string;
  startAfter?: Date;
  /** Re-runs after the handler throws. Default 0: a failed job stays failed. */
  retryLimit?: number;
};

export type Jobs = {
  /** Returns the job id, or null when the queue's policy refused a duplicate `singletonKey`. */
  send(queue: string, data: JobData, opts?: SendOptions): Promise<string | null>;
  /** Registers a handler; it starts polling at `start()` (at once when already started). */
  work(queue: string, handler: JobHandler, opts?: { concurrency?: number }): Promise<void>;
  start(): Promise<void>;
  /** Graceful (default): stops polling and waits up to `timeoutMs` (30 s) for running handlers. */
  stop(opts?: { graceful?: boolean; timeoutMs?: number }): Promise<void>;
};

export type QueuePolicy = "standard" | "short" | "singleton" | "stately";

export type QueueOptions = {
  /** pg-boss's policy; "stately" allows one queued and one running job per `singletonKey`. */
  policy?: QueuePolicy;
  /** How long one run may take before it is given up (pg-boss default 15 min, max < 24 h). */
  expireInSeconds?: number;
};

export type JobsOptions = {
  database: DatabaseHandle;
  /** The raw PGlite client behind `database` (kind "pglite"). */
  pglite?: PGlite;
  /** The PostgreSQL URL behind `database` (kind "postgres"); pg-boss opens its own `pg` pool. */
  postgresUrl?: string;
  logger: Logger;
  /** Every queue this process sends to or works on, created (or updated) at `start()`. */
  queues: Readonly<Record<string, QueueOptions>>;
  /** Each worker's poll interval (default 2, minimum 0.5). */
  pollingIntervalSeconds?: number;
  /** How often expired runs are given up and abandoned ones resumed (default 60). */
  maintenanceIntervalSeconds?: number;
  /** A job is resumed after abandonment only while it has had fewer runs than this (default 5). */
  maxRuns?: number;
};

type Registration = { queue: string; handler: JobHandler; concurrency: number };

/**
 * One pg-boss instance per `start()`: pg-boss 10 does not run maintenance again after a restart.
 * `workers` holds its worker ids by queue, to wake them.
 */
type Session = { boss: PgBoss; gate: GatedExecutor | undefined; workers: Map<string, string[]> };

export function createJobs(options: JobsOptions): Jobs {
  const { logger, queues } = options;
  const pglite = options.database.kind === "pglite" ? requirePglite(options) : undefined;
  const connectionString = pglite ? undefined : requireUrl(options);
  const registrations: Registration[] = [];
  /** The runs in progress, by job id: `stop()` aborts them. */
  const running = new Map<string, AbortController>();
  let session: Session | undefined;
  let state: "stopped" | "starting" | "started" | "stopping" = "stopped";
  /** Settles when the current `start()` does: `send` during a start waits for it. */
  let starting: Promise<void> | undefined;

  const open = async (): Promise<Session> => {
    // pg-boss brings `pg`, cron-parser and luxon (~0.5 MB of code): loaded when the queue starts,
    // which `patchbay serve` does after it listens.
    const { default: PgBoss } = await import("pg-boss");
    // A new gate too: one left open for the previous session's late handlers would let them write.
    const gate = pglite ? gated(pgliteExecutor(pglite)) : undefined;
    const boss = new PgBoss({
      ...(gate ? { db: gate as PgBoss.Db } : { connectionString, max: 5 }),
      application_name: "patchbay-jobs",
      // Nothing uses cron: skip its queue, its polling worker and its timers.
      schedule: false,
      retryLimit: 0,
      pollingIntervalSeconds: options.pollingIntervalSeconds ?? 2,
      maintenanceIntervalSeconds: options.maintenanceIntervalSeconds ?? 60,
    });
    // pg-boss's pool reports a lost connection here and reconnects by itself. The error object
    // drags the whole `pg` client along, so only its message and code are logged.
    boss.on("error", (err: Error & { code?: unknown }) =>
      logger.warn({ error: err.message, code: err.code }, "job queue error"),
    );
    // Emitted by whichever instance ran this round's maintenance, which is what expires runs.
    boss.on("maintenance", () => void resume(boss));
    gate?.open();
    return { boss, gate, workers: new Map() };
  };

  const resume = async (boss: PgBoss) => {
    try {
      const resumed = await resumeAbandonedJobs({
        boss,
        queues: Object.keys(queues),
        maxRuns: options.maxRuns ?? 5,
      });
      for (const [queue, jobIds] of resumed) logger.warn({ queue, jobIds }, "resuming abandoned jobs");
    } catch (err) {
      logger.error({ err }, "resuming abandoned jobs failed");
    }
  };

  const attach = async ({ boss, workers }: Session, { queue, handler, concurrency }: Registration) => {
    const ids = workers.get(queue) ?? [];
    workers.set(queue, ids);
    // pg-boss 10 runs one batch per worker at a time: concurrency is that many workers.
    for (let i = 0; i < concurrency; i++) {
      ids.push(
        await boss.work<JobData>(queue, { batchSize: 1 }, async (batch) => {
          for (const job of batch) await run(queue, job, handler);
        }),
      );
    }
  };

  /**
   * Wakes this process's workers on `queue` after it sent a job there: an idle one fetches at once
   * instead of at its next poll, a busy one right after its run (a run that queues the next step,
   * as a remediation's do, goes on without a pause). Only the sender's own workers are woken, and
   * once per job sent, so the other instances still get their share of a burst at their polls.
   */
  const wake = (queue: string) => {
    if (state !== "started" || !session) return;
    for (const id of session.workers.get(queue) ?? []) session.boss.notifyWorker(id);
  };

  /** One run of one job. A throw is logged and rethrown: pg-boss then fails the job (or retries it). */
  const run = async (queue: string, job: PgBoss.Job<JobData>, handler: JobHandler) => {
    const controller = new AbortController();
    running.set(job.id, controller);
    // pg-boss fails a run that outlives its expiration, though the promise goes on: tell it.
    // (pg-boss reports expireInSeconds as a numeric string.)
    const expiry = setTimeout(
      () => controller.abort(new Error("job run expired")),
      Math.max(1, Number(job.expireInSeconds)) * 1000,
    );
    try {
      await handler({ id: job.id, data: job.data, signal: controller.signal });
    } catch (err) {
      logger.warn({ err, queue, jobId: job.id }, "job handler failed");
      throw err;
    } finally {
      clearTimeout(expiry);
      running.delete(job.id);
    }
  };

  /** Opens pg-boss, creates the queues, resumes abandoned runs, then attaches the workers. */
  const begin = async (): Promise<void> => {
    let opened: Session;
    try {
      opened = await open();
    } catch (err) {
      state = "stopped";
      throw err;
    }
    const { boss, gate } = opened;
    try {
      await boss.start();
      // One read on a start whose queues are as declared: creating and updating each queue
      // anyway took a start on PGlite ~45 ms, with /readyz's ping queued behind it.
      const existing = new Map((await boss.getQueues()).map((queue) => [queue.name, queue]));
      for (const [name, queueOptions] of Object.entries(queues)) {
        const settings = definedOnly(queueOptions);
        const current = existing.get(name);
        if (!current) await boss.createQueue(name, { name, ...settings });
        else if (!isAsDeclared(current, settings)) await boss.updateQueue(name, { name, ...settings });
      }
      await resume(boss);
    } catch (err) {
      await boss.stop({ graceful: false }).catch(() => {});
      gate?.close();
      state = "stopped";
      throw err;
    }
    session = opened;
    const pending = [...registrations];
    state = "started";
    for (const registration of pending) await attach(opened, registration);
  };

  const assertQueue = (queue: string) => {
    if (!Object.hasOwn(queues, queue)) {
      throw new Error(`Job queue "${queue}" is not declared in createJobs({ queues }).`);
    }
  };

  return {
    async send(queue, data, opts = {}) {
      assertQueue(queue);
      if (state === "starting") await starting;
      if (state !== "started" || !session) throw new Error("The job queue is not started.");
      const { tx, ...rest } = opts;
      // pg-boss validates any key present, even when undefined.
      const sendOptions: PgBoss.SendOptions = definedOnly(rest);
      if (tx) sendOptions.db = transactionExecutor(tx);
      const id = await session.boss.send(queue, data, sendOptions);
      // A job due later is left to the polls that will find it then.
      const due = !rest.startAfter || rest.startAfter.getTime() <= Date.now();
      if (id !== null && due) afterCommit(tx ?? options.database.db, () => wake(queue));
      return id;
    },

    async work(queue, handler, opts = {}) {
      assertQueue(queue);
      const registration = { queue, handler, concurrency: Math.max(1, opts.concurrency ?? 1) };
      registrations.push(registration);
      if (state === "started" && session) await attach(session, registration);
    },

    async start() {
      if (state === "starting") return await starting;
      if (state !== "stopped") return;
      state = "starting";
      starting = begin();
      // A failed start is the caller's to handle; a `send` waiting on it fails by itself.
      starting.catch(() => undefined);
      await starting;
    },

    async stop({ graceful = true, timeoutMs = 30_000 } = {}) {
      if (state === "starting") await starting?.catch(() => undefined);
      if (state !== "started" || !session) return;
      state = "stopping";
      const { boss, gate } = session;
      await boss.stop({ graceful, timeout: timeoutMs, close: true, wait: true });
      // pg-boss has failed whatever was still running ("shut down while active"), to be resumed.
      for (const controller of running.values()) controller.abort(new Error("job queue stopped"));
      gate?.close();
      session = undefined;
      state = "stopped";
    },
  };
}

/**
 * Whether a queue already holds the declared settings. pg-boss's updateQueue changes only the
 * settings it is given (and the policy, "standard" when none is), so those are all to compare.
 */
function isAsDeclared(current: PgBoss.QueueResult, declared: QueueOptions): boolean {
  const wanted: Record<string, unknown> = { policy: "standard", ...declared };
  return Object.entries(wanted).every(
    ([key, value]) => (current as unknown as Record<string, unknown>)[key] === value,
  );
}

function requirePglite(options: JobsOptions): PGlite {
  if (!options.pglite) throw new Error("createJobs: a PGlite database needs the raw client (pglite).");
  return options.pglite;
}

function requireUrl(options: JobsOptions): string {
  if (!options.postgresUrl) throw new Error("createJobs: a PostgreSQL database needs postgresUrl.");
  return options.postgresUrl;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
