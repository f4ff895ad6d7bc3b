/** Float slack (ms) so that `limit` requests at the same instant all fit however `window / limit` rounds. */
const EPSILON_MS = 1e-6;

/**
 * One request-rate quota kept with GCRA (the generic cell rate algorithm): a token bucket stored
 * as one number per partition, its theoretical arrival time (TAT). `limit` requests per
 * `windowMs`, in bursts of up to `limit`; capacity comes back one request every `windowMs / limit`
 * rather than all at once at a window's edge, so there is no double burst across a boundary as
 * with fixed windows.
 *
 * A partition whose TAT has passed has its whole allowance, exactly as if it had no entry, so
 * dropping it changes no answer: the map only holds partitions that made a request within the
 * last window, and is swept once per window. Synchronous, so a check and the spending that
 * follows it cannot interleave with another request's.
 *
 * `ahead` below is how far (ms) a partition's TAT runs ahead of now: 0 with the whole allowance,
 * up to `windowMs` with none left.
 */
export class GcraQuota {
  readonly limit: number;
  readonly windowMs: number;
  readonly #interval: number;
  readonly #tats = new Map<string, number>();
  #nextSweep = 0;

  constructor(limit: number, windowMs: number) {
    if (!(limit >= 1) || !(windowMs > 0)) throw new RangeError("a quota needs limit ≥ 1 and a window");
    this.limit = limit;
    this.windowMs = windowMs;
    this.#interval = windowMs / limit;
  }

  ahead(partition: string, now: number): number {
    const tat = this.#tats.get(partition);
    return tat === undefined || tat <= now ? 0 : tat - now;
  }

  /** Whether one more request fits a partition that is `ahead` ms ahead. */
  fits(ahead: number): boolean {
    return ahead + this.#interval <= this.windowMs + EPSILON_MS;
  }

  /** Spends one request (the caller checked `fits`); returns the partition's new `ahead`. */
  take(partition: string, now: number, ahead: number): number {
    if (now >= this.#nextSweep) this.#sweep(now);
    this.#tats.set(partition, now + ahead + this.#interval);
    return ahead + this.#interval;
  }

  /** Whole requests available to a partition `ahead` ms ahead. */
  remaining(ahead: number): number {
    return Math.max(0, Math.floor((this.windowMs - ahead) / this.#interval + EPSILON_MS));
  }

  /** Milliseconds until a partition `ahead` ms ahead has one request more than `remaining` says. */
  msUntilNext(ahead: number): number {
    return Math.max(0, (this.remaining(ahead) + 1) * this.#interval - (this.windowMs - ahead));
  }

  /** Partitions held (for tests of the memory bound). */
  get size(): number {
    return this.#tats.size;
  }

  #sweep(now: number): void {
    for (const [partition, tat] of this.#tats) if (tat <= now) this.#tats.delete(partition);
    this.#nextSweep = now + this.windowMs;
  }
}
