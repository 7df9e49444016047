/**
 * A lane: a FIFO with a concurrency cap. A finished job hands its slot straight to the next waiting one, so
 * the cap holds however jobs finish; the cap is read on each start, so a config change applies to new jobs.
 */
export class Lane {
  active = 0;
  completed = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    readonly name: string,
    private readonly capacity: () => number,
  ) {}

  get queued(): number {
    return this.waiting.length;
  }

  get cap(): number {
    return this.capacity();
  }

  async run<T>(job: () => Promise<T>): Promise<T> {
    if (this.active < this.capacity()) this.active++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await job();
    } finally {
      this.completed++;
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}
