/** A FIFO lock for async work; `lock()` resolves with the release function (calling it twice is harmless). */
export class Mutex {
  private held = false;
  private readonly waiting: Array<() => void> = [];

  get locked(): boolean {
    return this.held;
  }

  lock(): Promise<() => void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve) => this.waiting.push(() => resolve(this.releaser())));
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.held = false;
    };
  }
}
