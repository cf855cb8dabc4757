// The documents waiting in this process, taken in turn by account: an account that uploads a
// hundred documents delays another account's one by at most one document's processing.

export class FairQueue<T extends { accountId: string }> {
  readonly #byAccount = new Map<string, T[]>();

  get size(): number {
    let size = 0;
    for (const waiting of this.#byAccount.values()) size += waiting.length;
    return size;
  }

  push(item: T): void {
    const waiting = this.#byAccount.get(item.accountId);
    if (waiting) waiting.push(item);
    else this.#byAccount.set(item.accountId, [item]);
  }

  /** The next account's oldest item; that account goes to the back of the turn. */
  shift(): T | undefined {
    for (const [accountId, waiting] of this.#byAccount) {
      const item = waiting.shift();
      this.#byAccount.delete(accountId);
      if (waiting.length) this.#byAccount.set(accountId, waiting); // re-inserted: last in the turn
      if (item) return item;
    }
    return undefined;
  }

  /** Takes out the items that match (a document deleted while it waited). */
  remove(matches: (item: T) => boolean): T[] {
    const removed: T[] = [];
    for (const [accountId, waiting] of this.#byAccount) {
      const kept: T[] = [];
      for (const item of waiting) (matches(item) ? removed : kept).push(item);
      if (kept.length) this.#byAccount.set(accountId, kept);
      else this.#byAccount.delete(accountId);
    }
    return removed;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (const waiting of this.#byAccount.values()) yield* waiting;
  }
}
