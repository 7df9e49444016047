/** Fan-out of log lines to the SSE subscribers of /api/logs/stream. */
export class LogBus {
  private readonly listeners = new Set<(line: string) => void>();

  publish(line: string): void {
    for (const listener of this.listeners) listener(line.trimEnd());
  }

  subscribe(listener: (line: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get size(): number {
    return this.listeners.size;
  }
}
