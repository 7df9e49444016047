/** The last lines logged, kept in memory so a log view opens on what just happened (`?backlog=` of the stream). */
export class Backlog {
  private readonly lines: string[] = [];
  private next = 0;
  constructor(readonly size: number) {}

  push(line: string): void {
    if (this.size === 0) return;
    if (this.lines.length < this.size) this.lines.push(line);
    else this.lines[this.next] = line;
    this.next = (this.next + 1) % this.size;
  }

  /** Oldest first. */
  all(): string[] {
    return this.lines.length < this.size ? [...this.lines] : [...this.lines.slice(this.next), ...this.lines.slice(0, this.next)];
  }
}
