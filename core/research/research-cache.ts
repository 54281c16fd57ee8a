// Owns the answers of recent crate research queries: at most `maxEntries`, each reused for `ttlMs`
// (the oldest goes first when full). Keyed by what makes two queries identical (research-proxy.ts
// builds the key). Keeps successes only: a failed or timed-out query is asked again.

export class ResearchCache<T> {
  readonly #entries = new Map<string, { value: T; at: number }>();

  constructor(
    private readonly maxEntries: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The answer stored for `key` and its age in ms, while it is fresh. */
  get(key: string): { value: T; ageMs: number } | undefined {
    const hit = this.#entries.get(key);
    if (!hit) return undefined;
    const ageMs = this.now() - hit.at;
    if (ageMs >= this.ttlMs) {
      this.#entries.delete(key);
      return undefined;
    }
    return { value: hit.value, ageMs };
  }

  set(key: string, value: T): void {
    if (this.maxEntries <= 0) return;
    this.#entries.delete(key);
    this.#entries.set(key, { value, at: this.now() });
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= this.maxEntries) break;
      this.#entries.delete(oldest);
    }
  }
}
