import type { Db } from "../../db/client.ts";
import { remoteAuthFor } from "../connections/remote-auth.ts";
import type { Egress } from "../egress/egress-fetch.ts";
import { openRemoteSession, type RemoteSession } from "../mcp-client/remote-session.ts";
import type { Keyring } from "../vault/keyring.ts";
import type { LiveConnection } from "./gate.ts";

/**
 * One run of a task's connections: its open sessions, one per connection, opened on first use
 * and closed when the run ends; which connections passed the first-use manifest check; and the
 * tool calls whose record is not final yet. Sessions live only inside the runtime: the model
 * never holds a client (spec 1A).
 */
export class SessionPool {
  readonly #sessions = new Map<string, Promise<RemoteSession>>();
  /** Sessions whose first-use manifest check matched: the stored verdict is insert-once. */
  readonly #checked = new Map<string, RemoteSession>();
  /** Calls in flight or whose record is still being written (see `settle`). */
  readonly #unsettled = new Set<Promise<void>>();
  readonly #deps: { db: Db; keyring: Keyring; egress: Egress };

  constructor(deps: { db: Db; keyring: Keyring; egress: Egress }) {
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

  /** Holds a call until `done` settles (its record is final, or failed to be written). */
  track(done: Promise<unknown>): void {
    const held: Promise<void> = done
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => this.#unsettled.delete(held));
    this.#unsettled.add(held);
  }

  /**
   * Resolves once every call made so far has its final record. The runtime awaits this before
   * it stores a step's transcript and before the task's status changes, so neither is ever
   * ahead of the call record.
   */
  async settle(): Promise<void> {
    while (this.#unsettled.size > 0) await Promise.all([...this.#unsettled]);
  }

  async closeAll(): Promise<void> {
    await this.settle();
    const open = [...this.#sessions.values()];
    this.#sessions.clear();
    this.#checked.clear();
    await Promise.all(open.map(async (s) => (await s.catch(() => undefined))?.close()));
  }
}
