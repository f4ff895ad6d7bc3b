import type { Db } from "../../db/client.ts";
import { remoteAuthFor } from "../connections/remote-auth.ts";
import type { Egress } from "../egress/egress-fetch.ts";
import { openRemoteSession, type RemoteSession } from "../mcp-client/remote-session.ts";
import type { Keyring } from "../vault/keyring.ts";
import type { LiveConnection } from "./gate.ts";

/**
 * The task's open sessions, one per connection, opened on first use and closed when the task
 * ends. Sessions live only inside the runtime: the model never holds a client (spec 1A).
 */
export class SessionPool {
  readonly #sessions = new Map<string, Promise<RemoteSession>>();
  /** Connections whose first-use manifest check matched: the stored verdict is insert-once. */
  readonly matched = new Set<string>();
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

  async closeAll(): Promise<void> {
    const open = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.all(open.map(async (s) => (await s.catch(() => undefined))?.close()));
  }
}
