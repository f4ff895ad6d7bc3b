import type { Db } from "../../platform/db/client.ts";
import type { Egress } from "../../platform/egress/egress-fetch.ts";
import type { Logger } from "../../platform/logging/logger.ts";
import { openRemoteSession, type RemoteSession } from "../../platform/mcp-client/remote-session.ts";
import type { Keyring } from "../../platform/vault/keyring.ts";
import { remoteAuthFor } from "../connections/index.ts";
import { type FinishedCall, finishToolCalls } from "./call-record.ts";
import type { LiveConnection } from "./gate.ts";

type PoolDeps = { db: Db; keyring: Keyring; egress: Egress; logger: Logger };

/**
 * One run's connections: a session per connection, opened on first use and closed when the run
 * ends; which passed the first-use manifest check; and the calls whose record is not final yet.
 * Sessions live only inside the runtime: the model never holds a client (spec 1A).
 */
export class SessionPool {
  readonly #sessions = new Map<string, Promise<RemoteSession>>();
  /** Sessions whose first-use manifest check matched: the stored verdict is insert-once. */
  readonly #checked = new Map<string, RemoteSession>();
  /** Calls in flight, and refused calls whose row is being inserted (see `settle`). */
  readonly #unsettled = new Set<Promise<void>>();
  /** Answered calls whose outcome is not written yet: written together by `settle`. */
  #finished: FinishedCall[] = [];
  readonly #deps: PoolDeps;

  constructor(deps: PoolDeps) {
    this.#deps = deps;
  }

  get(live: LiveConnection): Promise<RemoteSession> {
    let session = this.#sessions.get(live.id);
    if (!session) {
      session = (async () =>
        openRemoteSession({
          egress: this.#deps.egress,
          endpointUrl: live.endpointUrl,
          auth: await remoteAuthFor(this.#deps.db, this.#deps.keyring, live),
        }))();
      // A failed open is not cached: the next call tries again (nothing was sent to the tool).
      session.catch(() => this.#sessions.delete(live.id));
      this.#sessions.set(live.id, session);
    }
    return session;
  }

  /** The connection's session once its manifest check matched in this run, else undefined. */
  checked(connectionId: string): RemoteSession | undefined {
    return this.#checked.get(connectionId);
  }

  markChecked(connectionId: string, session: RemoteSession): void {
    this.#checked.set(connectionId, session);
  }

  /** Holds a call until `done` settles (answered, or its refusal recorded). */
  track(done: Promise<unknown>): void {
    const held: Promise<void> = done
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => this.#unsettled.delete(held));
    this.#unsettled.add(held);
  }

  /** An answered call's outcome, to be written by the next `settle`. */
  finished(call: FinishedCall): void {
    this.#finished.push(call);
  }

  /**
   * Waits for the calls in flight, then writes the outcomes gathered since the last settle in one
   * statement. Awaited before a step's transcript is stored and before the task's status changes,
   * so neither is ever ahead of the call record. A failed write leaves those rows `ambiguous`,
   * never less than the truth.
   */
  async settle(): Promise<void> {
    while (this.#unsettled.size > 0) await Promise.all([...this.#unsettled]);
    const batch = this.#finished;
    this.#finished = [];
    try {
      await finishToolCalls(this.#deps.db, batch);
    } catch (err) {
      this.#deps.logger.warn(
        { err, callIds: batch.map((c) => c.id) },
        "tool call outcomes were not written; their records stay ambiguous",
      );
    }
  }

  async closeAll(): Promise<void> {
    await this.settle();
    const open = [...this.#sessions.values()];
    this.#sessions.clear();
    this.#checked.clear();
    await Promise.all(open.map(async (s) => (await s.catch(() => undefined))?.close()));
  }
}
