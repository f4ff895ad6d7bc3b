import type { MemberActor } from "../../actor.ts";

/**
 * Resolved API keys, held in memory so an authenticated request needs no database round trip
 * for its credential. Correctness rests on invalidation, not on the TTL:
 *
 * - every change to who may do what sends a notification (`notifyAuthChanged`) that each
 *   instance receives over `LISTEN` and answers by dropping that organisation's entries;
 * - while this instance is not listening (not yet, or the connection dropped), nothing is
 *   served from or stored in the cache: every request reads the database (fail safe);
 * - a read that overlaps an invalidation is not stored (`ticket`), so an answer read before a
 *   change committed cannot outlive the notification that announced it;
 * - the TTL only bounds what a change made without a notification (e.g. SQL by hand) can do.
 *
 * Only keys that resolved are stored: unknown secrets are never cached, so guessing cannot fill
 * the cache or push real keys out. Entries are keyed by the secret's SHA-256, never the secret.
 */
export type AuthCache = {
  /** The live entry for a key hash, or undefined (also whenever the cache is not trusted). */
  get(secretHash: string): CachedApiKey | undefined;
  /** Take before reading the database; `set` refuses the answer if anything changed since. */
  ticket(): number;
  set(secretHash: string, entry: { actor: MemberActor; lastUsedAt: number | null }, ticket: number): void;
  /** Drops one organisation's entries; a notification for it arrived. */
  dropOrganization(organizationId: string): void;
  /**
   * This instance is changing the organisation's access: drop its entries now and store none
   * until `release(token)` (the change's own notification came back) or a deadline passes.
   */
  hold(organizationId: string, token: string): void;
  release(token: string): void;
  /**
   * Resolves when the change's notification has come back to this instance (or at once when
   * the cache is not listening, or after `maxWaitMs`).
   */
  delivered(token: string, maxWaitMs: number): Promise<void>;
  /** Drops everything (e.g. a notification that could not be read). */
  clear(): void;
  /** Listening or not: when not, the cache is emptied and bypassed. */
  setTrusted(trusted: boolean): void;
  readonly trusted: boolean;
  readonly size: number;
};

export type CachedApiKey = {
  readonly actor: MemberActor;
  /** When `last_used_at` was last written (ms), for its once-a-minute refresh. */
  lastUsedAt: number | null;
  readonly expiresAt: number;
};

export type AuthCacheOptions = {
  /** Safety net for changes made without a notification. Default 30 s. */
  ttlMs?: number;
  /** Bound on entries; the least recently used go first. Default 10 000. */
  maxEntries?: number;
  /** How long a `hold` lasts if its notification never comes back (rolled back). Default 10 s. */
  holdMs?: number;
  /** Milliseconds, monotonic enough for expiry; tests move it. */
  now?: () => number;
};

export function createAuthCache(options: AuthCacheOptions = {}): AuthCache {
  const ttlMs = options.ttlMs ?? 30_000;
  const maxEntries = options.maxEntries ?? 10_000;
  const holdMs = options.holdMs ?? 10_000;
  const now = options.now ?? (() => performance.now());
  // Map iteration order is insertion order: re-inserting on a hit makes the first key the
  // least recently used one.
  const entries = new Map<string, CachedApiKey>();
  const holds = new Map<string, { organizationId: string; until: number; waiters: (() => void)[] }>();
  let trusted = false;
  let epoch = 0;

  const held = (organizationId: string): boolean => {
    const t = now();
    for (const [token, h] of holds) {
      if (h.until <= t) release(token);
      else if (h.organizationId === organizationId) return true;
    }
    return false;
  };

  const dropOrganization = (organizationId: string) => {
    epoch++;
    for (const [hash, entry] of entries) {
      if (entry.actor.organizationId === organizationId) entries.delete(hash);
    }
  };

  const release = (token: string) => {
    const h = holds.get(token);
    holds.delete(token);
    for (const wake of h?.waiters ?? []) wake();
  };

  return {
    get(secretHash) {
      if (!trusted) return undefined;
      const entry = entries.get(secretHash);
      if (!entry) return undefined;
      entries.delete(secretHash);
      if (entry.expiresAt <= now()) return undefined;
      entries.set(secretHash, entry);
      return entry;
    },
    ticket: () => epoch,
    set(secretHash, entry, ticket) {
      if (!trusted || ticket !== epoch) return;
      if (holds.size > 0 && held(entry.actor.organizationId)) return;
      entries.delete(secretHash);
      entries.set(secretHash, { ...entry, expiresAt: now() + ttlMs });
      while (entries.size > maxEntries) {
        const oldest = entries.keys().next();
        if (oldest.done) break;
        entries.delete(oldest.value);
      }
    },
    dropOrganization,
    hold(organizationId, token) {
      holds.set(token, { organizationId, until: now() + holdMs, waiters: [] });
      dropOrganization(organizationId);
    },
    release,
    delivered(token, maxWaitMs) {
      const h = holds.get(token);
      if (!trusted || !h) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, maxWaitMs);
        timer.unref();
        h.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
    clear() {
      epoch++;
      entries.clear();
    },
    setTrusted(next) {
      epoch++;
      entries.clear();
      trusted = next;
      // Not listening: a change's own notification may never come back; nobody waits for it.
      if (!next) for (const h of holds.values()) for (const wake of h.waiters.splice(0)) wake();
    },
    get trusted() {
      return trusted;
    },
    get size() {
      return entries.size;
    },
  };
}
